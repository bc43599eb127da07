package motors

import (
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
)

// JointStatesUpdate is an update of JointsTopic: one group's joint_states
// with the node's own joint names, the group it comes from and, for a
// humanoid's limb (role limb), where its joints are.
type JointStatesUpdate struct {
	Group    string `json:"group"`
	Role     string `json:"role"`
	Instance string `json:"instance"`
	msg.JointStates
	// Points are a limb's joint origins from its mount out, then its tip
	// (the sole, the hand, the top of the head): robot frame (x forward, y
	// left, z up, the floor under the test stand at z = 0), m, from the
	// humanoid's kinematics (kinematics.HumanoidLimb) at these positions.
	// Absent for the other roles and for a limb the humanoid has not.
	Points [][3]float64 `json:"points,omitempty"`
	// Facing is where the limb's last link's x axis points (robot frame,
	// unit; kinematics.Limb.Facing): where the face looks, where the toes
	// point. Absent with Points.
	Facing *[3]float64 `json:"facing,omitempty"`
}

// jointStatesUpdate makes g's update of JointsTopic from its joint_states.
func jointStatesUpdate(g Group, js msg.JointStates) JointStatesUpdate {
	u := JointStatesUpdate{Group: g.Name, Role: g.Role, Instance: g.Instance, JointStates: js}
	if g.Role != msg.RoleLimb {
		return u
	}
	limb, err := kinematics.HumanoidLimb(g.Instance)
	if err != nil {
		return u
	}
	q := limb.Order(js.Name, js.Position)
	for _, p := range limb.Chain(q) {
		u.Points = append(u.Points, [3]float64(p))
	}
	f := [3]float64(limb.Facing(q))
	u.Facing = &f
	return u
}
