package arm

import "fmt"

// MJCF returns the arm as a MuJoCo model (MJCF) with the given timestep
// (s) and the RK4 integrator, from the arm's own parameters: the five
// joints' rigid-body chain (rods along each link, each servo's rotor
// inertia as its joint's armature, its hard stops as the joint's range)
// mounted at Mount, and the gripper as a sixth hinge in the hand with the
// finger mechanism's small inertia. Collisions are not in the model. The
// servos' drive and the friction are not either: a caller applies them as
// generalised forces, joints in order, the gripper last.
func (a *Arm) MJCF(timestep float64) string {
	var limits [][2]float64
	for _, s := range a.joints {
		lo, hi := s.Limits()
		limits = append(limits, [2]float64{lo, hi})
	}
	names := make([]string, NumJoints)
	for i := range names {
		names[i] = JointName(i)
	}
	glo, ghi := a.gripper.Limits()
	gripper := fmt.Sprintf(`<body name="gripper" pos="%g 0 0"><joint name="gripper" type="hinge" axis="0 0 1" limited="true" range="%g %g" armature="%g" solreflimit="0.0002 20" solimplimit="0.99 0.999 0.0001"/><inertial pos="0 0 0" mass="1e-9" diaginertia="%g %g %g"/></body>`,
		a.p.Links[WristRoll].Length, glo, ghi, a.gripper.Params().RotorInertia, gripperInertia, gripperInertia, gripperInertia)
	return fmt.Sprintf(`<mujoco model="%s">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="RK4" gravity="0 0 %g"/>
  <worldbody>
%s  </worldbody>
</mujoco>
`, a.Name(), timestep, -StandardGravity, a.dyn.chain.MJCFBodies(names, limits, gripper))
}
