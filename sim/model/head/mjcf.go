package head

import "fmt"

// MJCF returns the head as a MuJoCo model (MJCF) with the given timestep
// (s) and the RK4 integrator, from the head's own parameters: three hinges
// in series (pan z, tilt y, roll x) meeting at the origin, the head a rigid
// body of Mass whose centre of mass sits GravityMoment/(Mass·g) above them,
// its inertia chosen so that, level, its moment about each axis is that
// axis's Inertia; each servo's rotor inertia is its joint's armature and
// its travel the joint's range. The servos' drive and friction are not in
// the model: a caller applies them as generalised forces.

func (h *Head) MJCF(timestep float64) string {
	var limits [][2]float64
	for _, s := range h.servos {
		lo, hi := s.Limits()
		limits = append(limits, [2]float64{lo, hi})
	}
	return fmt.Sprintf(`<mujoco model="head">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="RK4" gravity="0 0 %g"/>
  <worldbody>
%s  </worldbody>
</mujoco>
`, timestep, -StandardGravity, h.chain.MJCFBodies([]string{"pan", "tilt", "roll"}, limits, ""))
}
