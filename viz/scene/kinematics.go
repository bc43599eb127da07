package scene

import (
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/saint-os/saint/kinematics"
)

// ArmGeometry is an arm's shoulder mount (m, robot frame: x forward, y
// left, z up), its five link lengths (m), shoulder out, and joint limits:
// the kinematics package's arm, which the server solves arm poses with.
type ArmGeometry = kinematics.Arm

// DefaultArm returns the geometry of the robot's arms (docs/sim.md):
// mounted 0.22 m either side of the centre, 0.45 m up.
func DefaultArm(side string) ArmGeometry { return kinematics.DefaultArm(side) }

// ArmChain returns the joint origins and the gripper centre (six points,
// robot frame, m) of an arm posed at joints (radians, shoulder out;
// missing joints are 0).
func ArmChain(g ArmGeometry, joints []float64) [6]mgl64.Vec3 { return g.Chain(joints) }

// Degrees converts float32 degrees (as ArmState carries them) to radians.
func Degrees(deg []float32) []float64 {
	out := make([]float64, len(deg))
	for i, d := range deg {
		out[i] = float64(d) * math.Pi / 180
	}
	return out
}

// Limb is a humanoid limb's pose: its joint origins from the mount out,
// then its tip (the sole, the hand, the top of the head), robot frame (x
// forward, y left, z up, the floor under the stand at 0), m; and where
// its last link's x axis points (the face, the toes).
type Limb struct {
	Points [][3]float64
	Facing [3]float64
}

// LimbFromJoints poses the humanoid's limb called instance at the joint
// angles named (rad; a joint state's names and positions) with the
// humanoid's kinematics (kinematics.HumanoidLimb, which the simulator's
// limbs are built on); ok is false for a limb the humanoid has not.
func LimbFromJoints(instance string, names []string, positions []float64) (l Limb, ok bool) {
	k, err := kinematics.HumanoidLimb(instance)
	if err != nil {
		return Limb{}, false
	}
	q := k.Order(names, positions)
	for _, p := range k.Chain(q) {
		l.Points = append(l.Points, [3]float64(p))
	}
	l.Facing = [3]float64(k.Facing(q))
	return l, true
}

// HasHumanoid says whether the scene has heard of a humanoid's limb, from
// its node or from the simulator.
func (s *Scene) HasHumanoid() bool { return len(s.Limbs) > 0 || len(s.LimbTruth) > 0 }

// FaceOffset is where the middle of the head's face is drawn, seen from
// the front (the robot's left on the viewer's right), as a fraction of
// the head's radius right of and below its centre, for pan and tilt
// (rad; pan positive turns the head to its left, tilt positive looks
// down: kinematics.HeadFacing).
func FaceOffset(pan, tilt float64) (right, down float64) {
	f := kinematics.HeadFacing(pan, tilt)
	return f[1], -f[2]
}
