package tracks

import "fmt"

// MJCF returns the tracked base as a MuJoCo model (MJCF) with the given
// timestep (s) and the RK4 integrator, from the base's own parameters: a
// body of Mass and YawInertia moving in the plane (slides along the world's
// x and y, a hinge about z: joints 0–2) and the two motor shafts (hinges 3
// and 4, left and right) with the rotor's and track's inertia seen at the
// motor (EffectiveInertia). The ground's forces — traction, rolling
// resistance, lateral friction, turning resistance (Traction, Rolling,
// Lateral, TurnResistance) — and the motors' torque are applied by the
// caller as generalised forces, so the laws are the model's and MuJoCo
// checks the mechanics: the body's planar dynamics and the shafts' coupling
// through the tracks.
func (t *Tracks) MJCF(timestep float64) string {
	p := t.p
	j := p.EffectiveInertia()
	motor := func(name string) string {
		return fmt.Sprintf(`<body name="%s"><joint name="%s" type="hinge" axis="0 1 0"/><inertial pos="0 0 0" mass="1e-3" diaginertia="%g %g %g"/></body>`,
			name, name, j, j, j)
	}
	return fmt.Sprintf(`<mujoco model="tracks">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="RK4" gravity="0 0 0"/>
  <worldbody>
    <body name="base">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="y" type="slide" axis="0 1 0"/>
      <joint name="yaw" type="hinge" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="%g" diaginertia="%g %g %g"/>
    </body>
    %s
    %s
  </worldbody>
</mujoco>
`, timestep, p.Mass, p.YawInertia, p.YawInertia, p.YawInertia, motor("motor_left"), motor("motor_right"))
}
