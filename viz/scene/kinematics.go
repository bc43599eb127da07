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
