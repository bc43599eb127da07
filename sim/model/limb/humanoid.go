package limb

import (
	"fmt"
	"strings"

	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/rigid"
)

// The humanoid's limbs, by instance: the names robot_param.yaml gives the
// limb role's nodes (role limb, instance leg_left …).
const (
	LegLeft  = kinematics.LegLeft
	LegRight = kinematics.LegRight
	ArmLeft  = kinematics.ArmLeft
	ArmRight = kinematics.ArmRight
	Neck     = kinematics.Neck
)

// Instances lists the humanoid's limbs.
func Instances() []string { return kinematics.HumanoidLimbs() }

// PelvisHeight is where the test stand holds the pelvis, m: the feet hang
// about 0.23 m above the floor.
const PelvisHeight = kinematics.PelvisHeight

// body is a joint's moving body of mass m whose centre of mass is at com
// (body frame), shaped as a rod of length l along z and radius r, with its
// actuator's armature.
type body struct {
	m        float64
	com      geom.Vec3
	l, r     float64
	armature float64
}

// jointSpec is what the model adds to a joint of the geometry: its body
// and, in its Joint, its stops, friction and actuator.
type jointSpec struct {
	b body
	Joint
}

// link is the rigid body of joint j of the limb's geometry: its hinge
// from the kinematics, its mass properties from b.
func link(j kinematics.LimbJoint, b body) rigid.Joint {
	ixx := b.m * (3*b.r*b.r + b.l*b.l) / 12
	return rigid.Joint{Offset: geom.Vec3(j.Offset), Axis: geom.Vec3(j.Axis), Mass: b.m, COM: b.com, Armature: b.armature,
		Inertia: geom.Mat3{{ixx, 0, 0}, {0, ixx, 0}, {0, 0, b.m * b.r * b.r / 2}}}
}

// Humanoid returns the limb of the PI Plus–like humanoid called instance
// (x forward, y left, z up; the pelvis at PelvisHeight). The geometry —
// mounts, joint offsets and axes, joint names — is the kinematics
// package's (kinematics.HumanoidLimb), which the server and the
// visualizer draw the humanoid from; the masses, friction, stops and
// actuators are the model's. Legs have six joints — hip_pitch, hip_roll,
// hip_yaw, knee, ankle_pitch, ankle_roll — arms four — shoulder_pitch,
// shoulder_roll, shoulder_yaw, elbow — and the neck two, yaw and pitch. A
// positive pitch turns +x towards −z: a positive hip_pitch swings the leg
// back, a positive knee bends it, a negative elbow bends the forearm
// forward. The right limbs' roll and yaw actuators are mounted mirrored
// (Mount −1, their stops mirrored with them), as joints.yaml's direction
// −1 says.
func Humanoid(instance string) (Params, error) {
	p, err := humanoid(instance)
	return mirror(p), err
}

func humanoid(instance string) (Params, error) {
	k, err := kinematics.HumanoidLimb(instance)
	if err != nil {
		return Params{}, fmt.Errorf("limb: no humanoid limb %q (known: %s)", instance, strings.Join(Instances(), ", "))
	}
	side := 1.0
	if strings.HasSuffix(instance, "_right") {
		side = -1
	}
	var joints []jointSpec
	switch instance {
	case LegLeft, LegRight:
		joints = []jointSpec{
			{body{0.6, geom.Vec3{0, 0, -0.02}, 0.05, 0.04, 0.012},
				Joint{Lower: -1.6, Upper: 1.0, Damping: 0.05, Coulomb: 0.1, Actuator: "ak70_10", Mount: 1}},
			{body{0.6, geom.Vec3{0, 0, -0.02}, 0.05, 0.04, 0.012},
				Joint{Lower: -0.5, Upper: 0.5, Damping: 0.05, Coulomb: 0.1, Actuator: "ak70_10", Mount: side}},
			{body{1.4, geom.Vec3{0, 0, -0.08}, 0.16, 0.04, 0.008},
				Joint{Lower: -0.8, Upper: 0.8, Damping: 0.05, Coulomb: 0.1, Actuator: "ak60_6", Mount: side}},
			{body{1.0, geom.Vec3{0, 0, -0.08}, 0.17, 0.035, 0.02},
				Joint{Lower: 0, Upper: 2.2, Damping: 0.05, Coulomb: 0.15, Actuator: "ak10_9", Mount: 1}},
			{body{0.15, geom.Vec3{}, 0.03, 0.02, 0.006},
				Joint{Lower: -1.0, Upper: 0.8, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: 1}},
			{body{0.5, geom.Vec3{0.02, 0, -0.025}, 0.05, 0.05, 0.006},
				Joint{Lower: -0.5, Upper: 0.5, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: side}},
		}
	case ArmLeft, ArmRight:
		joints = []jointSpec{
			{body{0.3, geom.Vec3{}, 0.04, 0.03, 0.006},
				Joint{Lower: -2.8, Upper: 2.8, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: 1}},
			{body{0.3, geom.Vec3{}, 0.04, 0.03, 0.006},
				Joint{Lower: -0.3, Upper: 2.0, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: side}},
			{body{0.5, geom.Vec3{0, 0, -0.07}, 0.14, 0.03, 0.004},
				Joint{Lower: -1.5, Upper: 1.5, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: side}},
			{body{0.45, geom.Vec3{0, 0, -0.08}, 0.17, 0.025, 0.004},
				Joint{Lower: -2.2, Upper: 0, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: 1}},
		}
	case Neck:
		joints = []jointSpec{
			{body{0.1, geom.Vec3{0, 0, 0.02}, 0.04, 0.03, 0.004},
				Joint{Lower: -1.5, Upper: 1.5, Damping: 0.02, Coulomb: 0.03, Actuator: "ak60_6", Mount: 1}},
			{body{0.7, geom.Vec3{0.02, 0, 0.06}, 0.12, 0.06, 0.004},
				Joint{Lower: -0.6, Upper: 0.6, Damping: 0.02, Coulomb: 0.03, Actuator: "ak60_6", Mount: 1}},
		}
	}
	p := Params{Name: "limb_" + instance, Base: geom.Vec3(k.Base)}
	for i, j := range joints {
		p.Joints = append(p.Joints, Joint{Name: k.Joints[i].Name, Body: link(k.Joints[i], j.b),
			Lower: j.Lower, Upper: j.Upper, Damping: j.Damping, Coulomb: j.Coulomb, Actuator: j.Actuator, Mount: j.Mount})
	}
	return p, nil
}

// mirror turns a left limb's description into the right one's: every
// joint whose actuator is mounted reversed (a roll or yaw, about an axis
// the mirror flips) has its stops mirrored too, so that the same motor
// command moves both limbs alike (outwards, say).
func mirror(p Params) Params {
	for i := range p.Joints {
		j := &p.Joints[i]
		if j.Mount < 0 {
			j.Lower, j.Upper = -j.Upper, -j.Lower
		}
	}
	return p
}
