package limb

import (
	"fmt"
	"strings"

	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/rigid"
)

// The humanoid's limbs, by instance: the names robot_param.yaml gives the
// limb role's nodes (role limb, instance leg_left …).
const (
	LegLeft  = "leg_left"
	LegRight = "leg_right"
	ArmLeft  = "arm_left"
	ArmRight = "arm_right"
	Neck     = "neck"
)

// Instances lists the humanoid's limbs.
func Instances() []string { return []string{LegLeft, LegRight, ArmLeft, ArmRight, Neck} }

// PelvisHeight is where the test stand holds the pelvis, m: the feet hang
// about 0.25 m above the floor.
const PelvisHeight = 0.70

// link is a body of mass m whose centre of mass is at com (body frame),
// shaped as a rod of length l along z and radius r.
func link(offset, axis geom.Vec3, m float64, com geom.Vec3, l, r, armature float64) rigid.Joint {
	ixx := m * (3*r*r + l*l) / 12
	return rigid.Joint{Offset: offset, Axis: axis, Mass: m, COM: com, Armature: armature,
		Inertia: geom.Mat3{{ixx, 0, 0}, {0, ixx, 0}, {0, 0, m * r * r / 2}}}
}

var (
	axisX = geom.Vec3{1, 0, 0}
	axisY = geom.Vec3{0, 1, 0}
	axisZ = geom.Vec3{0, 0, 1}
)

// Humanoid returns the limb of the PI Plus–like humanoid called instance
// (x forward, y left, z up; the pelvis at PelvisHeight). Legs have six
// joints — hip_pitch, hip_roll, hip_yaw, knee, ankle_pitch, ankle_roll —
// arms four — shoulder_pitch, shoulder_roll, shoulder_yaw, elbow — and the
// neck two, yaw and pitch. A positive pitch turns +x towards −z: a
// positive hip_pitch swings the leg back, a positive knee bends it, a
// negative elbow bends the forearm forward. The right limbs' roll and yaw
// actuators are mounted mirrored (Mount −1, their stops mirrored with
// them), as joints.yaml's direction −1 says.
func Humanoid(instance string) (Params, error) {
	p, err := humanoid(instance)
	return mirror(p), err
}

func humanoid(instance string) (Params, error) {
	side := 1.0
	if strings.HasSuffix(instance, "_right") {
		side = -1
	}
	name := "limb_" + instance
	switch instance {
	case LegLeft, LegRight:
		return Params{Name: name, Base: geom.Vec3{0, side * 0.075, PelvisHeight}, Joints: []Joint{
			{Name: "hip_pitch", Body: link(geom.Vec3{}, axisY, 0.6, geom.Vec3{0, 0, -0.02}, 0.05, 0.04, 0.012),
				Lower: -1.6, Upper: 1.0, Damping: 0.05, Coulomb: 0.1, Actuator: "ak70_10", Mount: 1},
			{Name: "hip_roll", Body: link(geom.Vec3{0, 0, -0.04}, axisX, 0.6, geom.Vec3{0, 0, -0.02}, 0.05, 0.04, 0.012),
				Lower: -0.5, Upper: 0.5, Damping: 0.05, Coulomb: 0.1, Actuator: "ak70_10", Mount: side},
			{Name: "hip_yaw", Body: link(geom.Vec3{0, 0, -0.05}, axisZ, 1.4, geom.Vec3{0, 0, -0.08}, 0.16, 0.04, 0.008),
				Lower: -0.8, Upper: 0.8, Damping: 0.05, Coulomb: 0.1, Actuator: "ak60_6", Mount: side},
			{Name: "knee", Body: link(geom.Vec3{0, 0, -0.16}, axisY, 1.0, geom.Vec3{0, 0, -0.08}, 0.17, 0.035, 0.02),
				Lower: 0, Upper: 2.2, Damping: 0.05, Coulomb: 0.15, Actuator: "ak10_9", Mount: 1},
			{Name: "ankle_pitch", Body: link(geom.Vec3{0, 0, -0.17}, axisY, 0.15, geom.Vec3{}, 0.03, 0.02, 0.006),
				Lower: -1.0, Upper: 0.8, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: 1},
			{Name: "ankle_roll", Body: link(geom.Vec3{0, 0, -0.025}, axisX, 0.5, geom.Vec3{0.02, 0, -0.025}, 0.05, 0.05, 0.006),
				Lower: -0.5, Upper: 0.5, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: side},
		}}, nil
	case ArmLeft, ArmRight:
		return Params{Name: name, Base: geom.Vec3{0, side * 0.16, PelvisHeight + 0.30}, Joints: []Joint{
			{Name: "shoulder_pitch", Body: link(geom.Vec3{}, axisY, 0.3, geom.Vec3{}, 0.04, 0.03, 0.006),
				Lower: -2.8, Upper: 2.8, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: 1},
			{Name: "shoulder_roll", Body: link(geom.Vec3{0, side * 0.03, 0}, axisX, 0.3, geom.Vec3{}, 0.04, 0.03, 0.006),
				Lower: -0.3, Upper: 2.0, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: side},
			{Name: "shoulder_yaw", Body: link(geom.Vec3{0, 0, -0.03}, axisZ, 0.5, geom.Vec3{0, 0, -0.07}, 0.14, 0.03, 0.004),
				Lower: -1.5, Upper: 1.5, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: side},
			{Name: "elbow", Body: link(geom.Vec3{0, 0, -0.14}, axisY, 0.45, geom.Vec3{0, 0, -0.08}, 0.17, 0.025, 0.004),
				Lower: -2.2, Upper: 0, Damping: 0.03, Coulomb: 0.05, Actuator: "ak60_6", Mount: 1},
		}}, nil
	case Neck:
		return Params{Name: name, Base: geom.Vec3{0, 0, PelvisHeight + 0.36}, Joints: []Joint{
			{Name: "yaw", Body: link(geom.Vec3{}, axisZ, 0.1, geom.Vec3{0, 0, 0.02}, 0.04, 0.03, 0.004),
				Lower: -1.5, Upper: 1.5, Damping: 0.02, Coulomb: 0.03, Actuator: "ak60_6", Mount: 1},
			{Name: "pitch", Body: link(geom.Vec3{0, 0, 0.04}, axisY, 0.7, geom.Vec3{0.02, 0, 0.06}, 0.12, 0.06, 0.004),
				Lower: -0.6, Upper: 0.6, Damping: 0.02, Coulomb: 0.03, Actuator: "ak60_6", Mount: 1},
		}}, nil
	}
	return Params{}, fmt.Errorf("limb: no humanoid limb %q (known: %s)", instance, strings.Join(Instances(), ", "))
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
