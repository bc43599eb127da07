package scene

import (
	"math"

	"github.com/go-gl/mathgl/mgl64"
)

// ArmGeometry is an arm's shoulder mount (m, robot frame: x forward, y
// left, z up) and its five link lengths (m), shoulder out.
type ArmGeometry struct {
	Mount mgl64.Vec3
	Links [5]float64
}

// DefaultArm returns the geometry of the simulated robot's arms (docs/sim.md):
// mounted 0.22 m either side of the centre, 0.45 m up.
func DefaultArm(side string) ArmGeometry {
	y := 0.22
	if side == "right" {
		y = -y
	}
	return ArmGeometry{Mount: mgl64.Vec3{0, y, 0.45}, Links: [5]float64{0.05, 0.25, 0.22, 0.06, 0.10}}
}

// ArmChain returns the joint origins and the gripper centre (six points,
// robot frame, m) of an arm posed at joints (radians, shoulder out;
// missing joints are 0).
func ArmChain(g ArmGeometry, joints []float64) [6]mgl64.Vec3 {
	var out [6]mgl64.Vec3
	r := mgl64.Ident3()
	p := g.Mount
	for i := 0; i < 5; i++ {
		q := 0.0
		if i < len(joints) {
			q = joints[i]
		}
		out[i] = p
		switch i {
		case 0:
			r = r.Mul3(mgl64.Rotate3DZ(q))
		case 4:
			r = r.Mul3(mgl64.Rotate3DX(q))
		default:
			r = r.Mul3(mgl64.Rotate3DY(q))
		}
		d := mgl64.Vec3{1, 0, 0}
		if i == 0 {
			d = mgl64.Vec3{0, 0, 1}
		}
		p = p.Add(r.Mul3x1(d).Mul(g.Links[i]))
	}
	out[5] = p
	return out
}

// Degrees converts float32 degrees (as ArmState carries them) to radians.
func Degrees(deg []float32) []float64 {
	out := make([]float64, len(deg))
	for i, d := range deg {
		out[i] = float64(d) * math.Pi / 180
	}
	return out
}
