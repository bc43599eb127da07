package balance

import "fmt"

// MJCF returns the balancing base as a MuJoCo model (MJCF) with the given
// timestep (s) and the RK4 integrator, from the base's own parameters: a
// free body of BodyMass with its centre of mass COMHeight above the axle
// (pitch inertia BodyInertia, yaw YawInertia; the roll inertia, which the
// Go model has no use for, equal to the pitch's) on two wheels of
// WheelMass and WheelInertia, hinged WheelBase apart at the axle, that
// touch a floor plane with friction and roll on it — the contact the Go
// model replaces with rolling without slip. The body is named "body" and
// the wheels "wheel_left" and "wheel_right"; the motors' torque and the
// bearings' friction are applied as the wheel hinges' generalised forces
// (the reaction acts on the body), a push with xfrc_applied at the body's
// centre of mass.
func (b *Balance) MJCF(timestep, friction float64) string {
	p := b.p
	// A disc's moments about its diameters are half its axial one; MuJoCo
	// requires a physically possible inertia.
	wd := p.WheelInertia / 2
	wheel := func(name string, y float64) string {
		return fmt.Sprintf(`<body name="%s" pos="0 %g 0">
        <joint name="%s" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 0" mass="%g" diaginertia="%g %g %g"/>
        <geom type="sphere" size="%g" friction="%g 0.005 0.0001" solref="0.002 1" contype="1" conaffinity="1"/>
      </body>`, name, y, name, p.WheelMass, wd, p.WheelInertia, wd, p.WheelRadius, friction)
	}
	return fmt.Sprintf(`<mujoco model="balance">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="RK4" gravity="0 0 %g"/>
  <worldbody>
    <geom name="floor" type="plane" size="50 50 0.1" friction="%g 0.005 0.0001" solref="0.002 1" contype="1" conaffinity="1"/>
    <body name="body" pos="0 0 %g">
      <freejoint name="base"/>
      <inertial pos="0 0 %g" mass="%g" diaginertia="%g %g %g"/>
      %s
      %s
    </body>
  </worldbody>
</mujoco>
`, timestep, -StandardGravity, friction, p.WheelRadius, p.COMHeight, p.BodyMass, p.BodyInertia, p.BodyInertia, p.YawInertia,
		wheel("wheel_left", p.WheelBase/2), wheel("wheel_right", -p.WheelBase/2))
}
