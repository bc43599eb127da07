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
	// left, z up, the floor at z = 0), m, from the humanoid's kinematics
	// (kinematics.HumanoidLimb) at these positions. The reference robot's
	// arms (role arms) have theirs by the arms' kinematics
	// (kinematics.DefaultArm: the shoulder, the joints, the gripper's
	// centre), its head (role head) three: the top of the torso, the
	// bottom and the top of the head. Absent for the other roles and for
	// a limb the humanoid has not.
	Points [][3]float64 `json:"points,omitempty"`
	// Facing is where the limb's last link's x axis points (robot frame,
	// unit; kinematics.Limb.Facing): where the face looks, where the toes
	// point; for the head, kinematics.HeadFacing. Absent for the arms and
	// with Points.
	Facing *[3]float64 `json:"facing,omitempty"`
}

// headHeight is the height of the head the reference robot's points
// place about HeadMount, and neckLength the neck under it, m.
const (
	headHeight = 0.16
	neckLength = 0.04
)

// jointStatesUpdate makes g's update of JointsTopic from its joint_states.
func jointStatesUpdate(g Group, js msg.JointStates) JointStatesUpdate {
	u := JointStatesUpdate{Group: g.Name, Role: g.Role, Instance: g.Instance, JointStates: js}
	switch g.Role {
	case msg.RoleArms:
		// The reference robot's arm: its joints by the arms' kinematics.
		if g.Instance != "left" && g.Instance != "right" {
			return u
		}
		q := kinematics.OrderArm(js.Name, js.Position)
		for _, p := range kinematics.DefaultArm(g.Instance).Chain(q[:]) {
			u.Points = append(u.Points, [3]float64(p))
		}
		return u
	case msg.RoleHead:
		// The reference robot's head: from the top of the torso (a
		// neck's length under the mount) to the top of the head, facing
		// where pan and tilt turn it.
		var pan, tilt float64
		for k, n := range js.Name {
			if k < len(js.Position) {
				switch n {
				case "pan":
					pan = js.Position[k]
				case "tilt":
					tilt = js.Position[k]
				}
			}
		}
		m := kinematics.HeadMount()
		u.Points = [][3]float64{{m[0], m[1], m[2] - headHeight/2 - neckLength}, {m[0], m[1], m[2] - headHeight/2}, {m[0], m[1], m[2] + headHeight/2}}
		f := [3]float64(kinematics.HeadFacing(pan, tilt))
		u.Facing = &f
		return u
	case msg.RoleLimb:
	default:
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
