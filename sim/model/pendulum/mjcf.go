package pendulum

import "fmt"

// MJCF returns the pendulum as a MuJoCo model (MJCF) with the given
// timestep (s) and the RK4 integrator: a point mass on a massless rod,
// hinged about y at the origin, hanging along −z at angle 0; the damping
// is the joint's. External torque is applied as the joint's generalised
// force. The oracle tests load it, so both simulators use one set of
// numbers.
func (pd *Pendulum) MJCF(timestep float64) string {
	p := pd.p
	return fmt.Sprintf(`<mujoco model="pendulum">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="RK4" gravity="0 0 %g"/>
  <worldbody>
    <body name="bob">
      <joint name="pivot" type="hinge" axis="0 1 0" damping="%g"/>
      <inertial pos="0 0 %g" mass="%g" diaginertia="1e-12 1e-12 1e-12"/>
    </body>
  </worldbody>
</mujoco>
`, timestep, -p.Gravity, p.Damping, -p.Length, p.Mass)
}
