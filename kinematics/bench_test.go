package kinematics

import (
	"testing"

	"github.com/go-gl/mathgl/mgl64"
)

// BenchmarkInverseTracking solves what a pose target solves every router
// tick while a controller moves: a pose 5 mm and a few milliradians from
// the one solved last, seeded with its angles.
func BenchmarkInverseTracking(b *testing.B) {
	a := DefaultArm("left")
	from := []float64{0.3, 0.8, -1.1, 0.4, 0.2}
	to := a.Forward([]float64{0.31, 0.79, -1.09, 0.41, 0.21})
	seed := make([]float64, NumJoints)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(seed, from)
		if _, err := a.Inverse(to, seed, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInverseFromRest solves a pose across the workspace from the
// arm straight out (arms move_pose's worst ordinary case).
func BenchmarkInverseFromRest(b *testing.B) {
	a := DefaultArm("left")
	to := a.Forward([]float64{-0.6, 1.0, -1.4, 0.8, -0.5})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Inverse(to, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInverseOutOfReach runs the full iteration budget: a pose the
// arm cannot reach, as a controller held beyond it gives every tick.
func BenchmarkInverseOutOfReach(b *testing.B) {
	a := DefaultArm("left")
	far := Pose{Position: mgl64.Vec3{2, 0.22, 0.5}, Rotation: mgl64.Ident3()}
	seed := make([]float64, NumJoints)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Inverse(far, seed, Options{}); err == nil {
			b.Fatal("reached")
		}
	}
}
