package urdf

import (
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/kinematics"
)

// The robot types whose built-in joints.yaml gives the models' joint
// limits.
const (
	ReferenceType = "saint-T-0L10A2G3H0W"
	HumanoidType  = "pi_plus-S-12L8A0G2H0W"
)

// limitsOf is each joint's lower and upper limit (rad, URDF frame) by
// robot-wide name, from the built-in configuration of robotType: the
// limits the motor middleware clamps commands to.
func limitsOf(robotType string) map[string][2]float64 {
	r, err := bringup.Resolve(fixtures.Config(), robotType)
	if err != nil {
		panic(fmt.Sprintf("urdf: the built-in configuration %s: %v", robotType, err)) // embedded; a test builds both models
	}
	out := map[string][2]float64{}
	for i, n := range r.Joints.JointNames {
		out[n] = [2]float64{r.Joints.Lower[i], r.Joints.Upper[i]}
	}
	return out
}

// Robots are the models go generate writes: the reference robot's and the
// humanoid's.
func Robots() []*Robot { return []*Robot{Reference(), Humanoid()} }

// Limits URDF requires of every moving joint but that no kinematics here
// uses: the arms' and head's servos (Feetech STS: about 3 N·m, 6 rad/s),
// the humanoid's actuators and the tracks' sprockets.
const (
	servoEffort, servoVelocity       = 3.0, 6.0
	actuatorEffort, actuatorVelocity = 25.0, 15.0
	sprocketEffort, sprocketVelocity = 20.0, 40.0
)

// Reference is the reference robot (robot types saint-T-0L10A2G3H0W and
// saint_can-T-0L10A2G3H0W): the tracked base, its two sprockets
// (left_track, right_track), the torso, the two arms with their shoulder
// mounts (arm_left_base, arm_right_base: the frames their target poses may
// be given in), joints and grippers, and the pan/tilt/roll head. Root
// base_link is the robot frame (x forward, y left, z up, on the floor).
func Reference() *Robot {
	r := &Robot{Name: "saint", Root: "base_link"}
	base := kinematics.DefaultTrackedBase()
	hullBottom, hullTop := 2*base.SprocketRadius, 0.30
	head := kinematics.HeadMount()
	r.Links = append(r.Links, Link{Name: "base_link", Visuals: []Visual{{
		Shape: "box", Origin: mgl64.Vec3{0, 0, (hullBottom + hullTop) / 2},
		Size: mgl64.Vec3{base.Length, base.Width - 0.1, hullTop - hullBottom}, Colour: "body",
	}}})
	for _, side := range []struct {
		name string
		y    float64
	}{{"left", 1}, {"right", -1}} {
		link := side.name + "_sprocket"
		r.Links = append(r.Links, Link{Name: link, Visuals: []Visual{{
			Shape: "cylinder", RPY: mgl64.Vec3{math.Pi / 2, 0, 0}, Radius: base.SprocketRadius, Length: 0.08, Colour: "joint",
		}}})
		// The track: a belt around the sprocket's height over the patch
		// on the floor, part of the hull (it does not turn with the
		// sprocket).
		r.Links[0].Visuals = append(r.Links[0].Visuals, Visual{
			Shape: "box", Origin: mgl64.Vec3{0, side.y * base.Gauge / 2, base.SprocketRadius},
			Size: mgl64.Vec3{base.ContactLength + 2*base.SprocketRadius, 0.08, 2 * base.SprocketRadius}, Colour: "joint",
		})
		r.Joints = append(r.Joints, Joint{
			Name: side.name + "_track", Type: Continuous, Parent: "base_link", Child: link,
			Origin: mgl64.Vec3{0, side.y * base.Gauge / 2, base.SprocketRadius}, Axis: mgl64.Vec3{0, 1, 0},
			Effort: sprocketEffort, Velocity: sprocketVelocity,
		})
	}
	// The torso: the column from the hull to the head, in the robot
	// frame.
	torsoTop := head[2] - 0.12
	r.Links = append(r.Links, Link{Name: "torso", Visuals: []Visual{{
		Shape: "box", Origin: mgl64.Vec3{0, 0, (hullTop + torsoTop) / 2}, Size: mgl64.Vec3{0.14, 0.36, torsoTop - hullTop}, Colour: "body",
	}}})
	r.Joints = append(r.Joints, Joint{Name: "torso_joint", Type: Fixed, Parent: "base_link", Child: "torso"})
	limits := limitsOf(ReferenceType)
	for _, side := range []string{"left", "right"} {
		addArm(r, side, kinematics.DefaultArm(side), limits)
	}
	addHead(r, head, limits)
	return r
}

// addArm adds an arm as kinematics.Arm draws it: the shoulder mount
// arm_{side}_base (robot axes), then shoulder_pan about z, the bracket
// along z, shoulder_lift, elbow and wrist_pitch about y and wrist_roll
// about x, each link along x, and {side}_gripper at the fingers' centre,
// its x axis out of the hand.
func addArm(r *Robot, side string, a kinematics.Arm, limits map[string][2]float64) {
	mount := "arm_" + side + "_base"
	r.Links = append(r.Links, Link{Name: mount, Visuals: []Visual{{Shape: "sphere", Radius: 0.035, Colour: "joint"}}})
	r.Joints = append(r.Joints, Joint{Name: mount + "_joint", Type: Fixed, Parent: "torso", Child: mount, Origin: a.Mount})
	parent := mount
	var offset mgl64.Vec3
	for i, name := range kinematics.ArmJointNames() {
		joint := side + "_" + name
		link := joint + "_link"
		axis := mgl64.Vec3{0, 1, 0}
		along := mgl64.Vec3{1, 0, 0}
		switch i {
		case 0:
			axis, along = mgl64.Vec3{0, 0, 1}, mgl64.Vec3{0, 0, 1}
		case kinematics.NumJoints - 1:
			axis = mgl64.Vec3{1, 0, 0}
		}
		lo, hi := a.Lower[i], a.Upper[i]
		if l, ok := limits[joint]; ok {
			lo, hi = l[0], l[1]
		}
		r.Links = append(r.Links, Link{Name: link, Visuals: segment(along.Mul(a.Links[i]), 0.025, "body")})
		r.Joints = append(r.Joints, Joint{
			Name: joint, Type: Revolute, Parent: parent, Child: link, Origin: offset, Axis: axis,
			Lower: lo, Upper: hi, Effort: servoEffort, Velocity: servoVelocity,
		})
		parent, offset = link, along.Mul(a.Links[i])
	}
	gripper := side + "_gripper"
	r.Links = append(r.Links, Link{Name: gripper, Visuals: []Visual{{Shape: "box", Size: mgl64.Vec3{0.04, 0.06, 0.02}, Colour: "accent"}}})
	r.Joints = append(r.Joints, Joint{Name: gripper + "_joint", Type: Fixed, Parent: parent, Child: gripper, Origin: offset})
}

// headHeight is the head's height as the web UI draws it about
// HeadMount, m.
const headHeight = 0.16

// addHead adds the head: pan about z, tilt about y (positive looks down),
// roll about x, all three axes through kinematics.HeadMount, as
// kinematics.HeadFacing turns the face.
func addHead(r *Robot, mount mgl64.Vec3, limits map[string][2]float64) {
	parent := "torso"
	origin := mount
	for _, j := range []struct {
		name string
		axis mgl64.Vec3
	}{
		{"head_pan", mgl64.Vec3{0, 0, 1}},
		{"head_tilt", mgl64.Vec3{0, 1, 0}},
		{"head_roll", mgl64.Vec3{1, 0, 0}},
	} {
		link := j.name + "_link"
		l, ok := limits[j.name]
		if !ok {
			l = [2]float64{-math.Pi, math.Pi}
		}
		r.Links = append(r.Links, Link{Name: link})
		r.Joints = append(r.Joints, Joint{
			Name: j.name, Type: Revolute, Parent: parent, Child: link, Origin: origin, Axis: j.axis,
			Lower: l[0], Upper: l[1], Effort: servoEffort, Velocity: servoVelocity,
		})
		parent, origin = link, mgl64.Vec3{}
	}
	r.Links = append(r.Links, Link{Name: "head", Visuals: []Visual{
		{Shape: "box", Size: mgl64.Vec3{0.12, 0.14, headHeight}, Colour: "body"},
		// The face (camera) side, so that rviz2 shows where it looks.
		{Shape: "box", Origin: mgl64.Vec3{0.065, 0, 0.02}, Size: mgl64.Vec3{0.01, 0.10, 0.04}, Colour: "accent"},
	}})
	r.Joints = append(r.Joints, Joint{Name: "head_joint", Type: Fixed, Parent: parent, Child: "head"})
}

// humanoidLimbs are the humanoid's limbs with the prefix of their joints'
// robot-wide names (the joint_prefix of its robot configuration's motor
// groups) and the name of the link at the limb's tip.
var humanoidLimbs = []struct{ instance, prefix, tip string }{
	{kinematics.LegLeft, "left_", "left_foot"},
	{kinematics.LegRight, "right_", "right_foot"},
	{kinematics.ArmLeft, "left_", "left_hand"},
	{kinematics.ArmRight, "right_", "right_hand"},
	{kinematics.Neck, "head_", "head"},
}

// Humanoid is the PI Plus–like humanoid (robot type
// pi_plus-S-12L8A0G2H0W) as kinematics.HumanoidLimb describes it: the
// torso, fixed to base_link (the floor under its test stand), and each
// limb's hinges from its mount on the torso out to its tip link
// (left_foot, right_hand, head …).
func Humanoid() *Robot {
	r := &Robot{Name: "pi_plus", Root: "base_link"}
	limits := limitsOf(HumanoidType)
	const shoulders = kinematics.PelvisHeight + 0.30
	r.Links = append(r.Links, Link{Name: "base_link"}, Link{Name: "torso", Visuals: []Visual{
		{Shape: "box", Origin: mgl64.Vec3{0, 0, (kinematics.PelvisHeight + shoulders) / 2}, Size: mgl64.Vec3{0.10, 0.22, shoulders - kinematics.PelvisHeight + 0.02}, Colour: "body"},
	}})
	r.Joints = append(r.Joints, Joint{Name: "torso_joint", Type: Fixed, Parent: "base_link", Child: "torso"})
	for _, l := range humanoidLimbs {
		limb, err := kinematics.HumanoidLimb(l.instance)
		if err != nil {
			panic(err) // the table names the kinematics' own limbs; a test builds the model
		}
		parent := "torso"
		origin := limb.Base
		for i, j := range limb.Joints {
			joint := l.prefix + j.Name
			link := joint + "_link"
			next := limb.Tip
			if i+1 < len(limb.Joints) {
				next = limb.Joints[i+1].Offset
			}
			if i == 0 {
				origin = origin.Add(j.Offset)
			}
			l, ok := limits[joint]
			if !ok {
				l = [2]float64{-math.Pi, math.Pi}
			}
			r.Links = append(r.Links, Link{Name: link, Visuals: segment(next, 0.02, "body")})
			r.Joints = append(r.Joints, Joint{
				Name: joint, Type: Revolute, Parent: parent, Child: link, Origin: origin, Axis: j.Axis,
				Lower: l[0], Upper: l[1], Effort: actuatorEffort, Velocity: actuatorVelocity,
			})
			parent, origin = link, next
		}
		tip := Link{Name: l.tip, Visuals: []Visual{{Shape: "sphere", Radius: 0.03, Colour: "accent"}}}
		r.Links = append(r.Links, tip)
		r.Joints = append(r.Joints, Joint{Name: l.tip + "_joint", Type: Fixed, Parent: parent, Child: l.tip, Origin: origin})
	}
	return r
}

// segment draws a link as a cylinder from its frame's origin to v (in its
// frame), with a ball at the joint; nothing but the ball for a zero v.
func segment(v mgl64.Vec3, radius float64, colour string) []Visual {
	out := []Visual{{Shape: "sphere", Radius: radius * 1.3, Colour: "joint"}}
	n := v.Len()
	if n == 0 {
		return out
	}
	return append(out, Visual{Shape: "cylinder", Origin: v.Mul(0.5), RPY: zTo(v.Mul(1 / n)), Radius: radius, Length: n, Colour: colour})
}

// zTo is the roll-pitch-yaw rotation that turns the z axis onto u (unit):
// pitch then yaw, as a cylinder along z needs no roll.
func zTo(u mgl64.Vec3) mgl64.Vec3 {
	pitch := math.Acos(math.Max(-1, math.Min(1, u[2])))
	yaw := math.Atan2(u[1], u[0])
	if math.Hypot(u[0], u[1]) < 1e-12 {
		yaw = 0
	}
	return mgl64.Vec3{0, pitch, yaw}
}
