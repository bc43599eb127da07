package kinematics

import (
	"fmt"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
)

// The humanoid's limbs, by instance: the names its robot configuration gives
// the limb role's nodes (role limb, instance leg_left …).
const (
	LegLeft  = "leg_left"
	LegRight = "leg_right"
	ArmLeft  = "arm_left"
	ArmRight = "arm_right"
	Neck     = "neck"
)

// HumanoidLimbs lists the humanoid's limbs.
func HumanoidLimbs() []string { return []string{LegLeft, LegRight, ArmLeft, ArmRight, Neck} }

// PelvisHeight is where the humanoid's test stand holds its pelvis above
// the floor, m: the feet hang about 0.23 m above it.
const PelvisHeight = 0.70

// LimbJoint is one hinge of a limb: where it sits and what it turns about,
// both in the frame of the link before it (the torso's, which is the
// robot's, for the first joint).
type LimbJoint struct {
	Name   string
	Offset mgl64.Vec3 // from the previous joint (from Limb.Base for the first), m
	Axis   mgl64.Vec3 // unit
}

// Limb is the geometry of a serial limb on the humanoid's fixed torso:
// the hinges from its mount out, and where the limb ends.
type Limb struct {
	Instance string
	// Base is the mount on the torso, robot frame (x forward, y left, z up,
	// the floor under the stand at z = 0), m.
	Base   mgl64.Vec3
	Joints []LimbJoint
	// Tip is the limb's end in the last joint's frame, m: the sole of a
	// foot, an arm's hand, the top of the head.
	Tip mgl64.Vec3
}

var (
	unitX = mgl64.Vec3{1, 0, 0}
	unitY = mgl64.Vec3{0, 1, 0}
	unitZ = mgl64.Vec3{0, 0, 1}
)

// HumanoidLimb returns the geometry of the PI Plus–like humanoid's limb
// called instance. Legs have six joints — hip_pitch, hip_roll, hip_yaw,
// knee, ankle_pitch, ankle_roll — 0.47 m from the hip to the sole; arms
// four — shoulder_pitch, shoulder_roll, shoulder_yaw, elbow; the neck two,
// yaw and pitch. A positive pitch turns +x towards −z: a positive
// hip_pitch swings the leg back, a positive knee bends it, a negative
// elbow bends the forearm forward. With every joint at 0 the legs and arms
// hang straight down and the head looks forward. The simulator's limb
// models are built on these numbers (sim/model/limb), so what a client
// draws from them is the body the physics moves.
func HumanoidLimb(instance string) (Limb, error) {
	side := 1.0
	if strings.HasSuffix(instance, "_right") {
		side = -1
	}
	switch instance {
	case LegLeft, LegRight:
		return Limb{Instance: instance, Base: mgl64.Vec3{0, side * 0.075, PelvisHeight}, Joints: []LimbJoint{
			{"hip_pitch", mgl64.Vec3{}, unitY},
			{"hip_roll", mgl64.Vec3{0, 0, -0.04}, unitX},
			{"hip_yaw", mgl64.Vec3{0, 0, -0.05}, unitZ},
			{"knee", mgl64.Vec3{0, 0, -0.16}, unitY},
			{"ankle_pitch", mgl64.Vec3{0, 0, -0.17}, unitY},
			{"ankle_roll", mgl64.Vec3{0, 0, -0.025}, unitX},
		}, Tip: mgl64.Vec3{0, 0, -0.025}}, nil
	case ArmLeft, ArmRight:
		return Limb{Instance: instance, Base: mgl64.Vec3{0, side * 0.16, PelvisHeight + 0.30}, Joints: []LimbJoint{
			{"shoulder_pitch", mgl64.Vec3{}, unitY},
			{"shoulder_roll", mgl64.Vec3{0, side * 0.03, 0}, unitX},
			{"shoulder_yaw", mgl64.Vec3{0, 0, -0.03}, unitZ},
			{"elbow", mgl64.Vec3{0, 0, -0.14}, unitY},
		}, Tip: mgl64.Vec3{0, 0, -0.17}}, nil
	case Neck:
		return Limb{Instance: instance, Base: mgl64.Vec3{0, 0, PelvisHeight + 0.36}, Joints: []LimbJoint{
			{"yaw", mgl64.Vec3{}, unitZ},
			{"pitch", mgl64.Vec3{0, 0, 0.04}, unitY},
		}, Tip: mgl64.Vec3{0, 0, 0.12}}, nil
	}
	return Limb{}, fmt.Errorf("kinematics: no humanoid limb %q (known: %s)", instance, strings.Join(HumanoidLimbs(), ", "))
}

// Chain returns the limb's joint origins and its tip (len(Joints)+1
// points, robot frame, m) for joint angles q (rad, missing ones 0): each
// joint's origin is the previous one's plus its Offset in the previous
// link's frame, and each joint turns the frames after it by q about its
// Axis, as the simulator's rigid chains do.
func (l Limb) Chain(q []float64) []mgl64.Vec3 {
	pts, _ := l.frames(q)
	return pts
}

// Facing returns where the last link's x axis points for joint angles q
// (robot frame, unit): the way the face looks, the toes point, the back of
// the hand faces. A stick figure of the joints alone does not show a turn
// about a link's own length (the neck's yaw); this does.
func (l Limb) Facing(q []float64) mgl64.Vec3 {
	_, r := l.frames(q)
	return r.Col(0)
}

func (l Limb) frames(q []float64) ([]mgl64.Vec3, mgl64.Mat3) {
	out := make([]mgl64.Vec3, 0, len(l.Joints)+1)
	r, p := mgl64.Ident3(), l.Base
	for i, j := range l.Joints {
		var qi float64
		if i < len(q) {
			qi = q[i]
		}
		p = p.Add(r.Mul3x1(j.Offset))
		out = append(out, p)
		r = r.Mul3(mgl64.QuatRotate(qi, j.Axis).Mat4().Mat3())
	}
	return append(out, p.Add(r.Mul3x1(l.Tip))), r
}

// JointNames returns the limb's joint names, from its mount out.
func (l Limb) JointNames() []string {
	out := make([]string, len(l.Joints))
	for i, j := range l.Joints {
		out[i] = j.Name
	}
	return out
}

// Order returns the angles of l's joints, in its order, from a joint
// state's names and positions (a limb role's joint_states); a joint the
// state does not name is 0, a name the limb has not is ignored.
func (l Limb) Order(names []string, positions []float64) []float64 {
	q := make([]float64, len(l.Joints))
	for k, n := range names {
		if k >= len(positions) {
			break
		}
		for i, j := range l.Joints {
			if j.Name == n {
				q[i] = positions[k]
			}
		}
	}
	return q
}
