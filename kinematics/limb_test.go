package kinematics

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
)

func near(a, b mgl64.Vec3) bool { return a.Sub(b).Len() < 1e-12 }

// Poses worked out by hand: the straight leg hangs 0.47 m from the hip to
// the sole; a knee bent 90° folds the shank and foot back, at the knee's
// height; a hip pitched back by 90° (positive) swings the whole leg
// behind; the right limbs mirror the left.
func TestHumanoidLimbPosesByHand(t *testing.T) {
	leg, err := HumanoidLimb(LegLeft)
	if err != nil {
		t.Fatal(err)
	}
	hip := mgl64.Vec3{0, 0.075, PelvisHeight}
	pts := leg.Chain(nil)
	if len(pts) != 7 || !near(pts[0], hip) || !near(pts[6], hip.Sub(mgl64.Vec3{0, 0, 0.47})) {
		t.Fatalf("straight leg: %v, want 7 points from %v down to the sole 0.47 m below", pts, hip)
	}
	knee := hip.Sub(mgl64.Vec3{0, 0, 0.25})
	pts = leg.Chain([]float64{0, 0, 0, math.Pi / 2})
	if !near(pts[3], knee) || !near(pts[6], knee.Add(mgl64.Vec3{-0.22, 0, 0})) {
		t.Fatalf("knee at 90°: knee %v sole %v, want %v and 0.22 m behind it", pts[3], pts[6], knee)
	}
	pts = leg.Chain([]float64{math.Pi / 2})
	if !near(pts[6], hip.Add(mgl64.Vec3{-0.47, 0, 0})) {
		t.Fatalf("hip_pitch +90°: sole at %v, want 0.47 m behind the hip", pts[6])
	}
	right, _ := HumanoidLimb(ArmRight)
	left, _ := HumanoidLimb(ArmLeft)
	q := []float64{-0.4, 0.3, 0.2, -1.1}
	l, r := left.Chain(q), right.Chain([]float64{-0.4, -0.3, -0.2, -1.1})
	for i := range l {
		if !near(r[i], mgl64.Vec3{l[i][0], -l[i][1], l[i][2]}) {
			t.Fatalf("point %d: right arm %v, left %v: not mirrored", i, r[i], l[i])
		}
	}
	neck, _ := HumanoidLimb(Neck)
	if f := neck.Facing([]float64{math.Pi / 2, 0.3}); !near(f, mgl64.Vec3{0, math.Cos(0.3), -math.Sin(0.3)}) {
		t.Fatalf("neck yaw 90° (to the left), pitch 0.3 (down): facing %v, want left and down", f)
	}
	if _, err := HumanoidLimb("tail"); err == nil {
		t.Fatal("a limb the humanoid has not: no error")
	}
}

// Order takes a joint state's angles by name, in any order, into the
// limb's.
func TestLimbOrder(t *testing.T) {
	neck, _ := HumanoidLimb(Neck)
	got := neck.Order([]string{"pitch", "jaw", "yaw"}, []float64{0.2, 9, -0.5})
	if len(got) != 2 || got[0] != -0.5 || got[1] != 0.2 {
		t.Fatalf("Order: %v, want [-0.5 0.2]", got)
	}
}
