package kinematics

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
)

func TestForwardStraightAndTurned(t *testing.T) {
	a := DefaultArm("left")
	p := a.Forward(nil)
	want := mgl64.Vec3{0.25 + 0.22 + 0.06 + 0.10, 0.22, 0.45 + 0.05}
	if p.Position.Sub(want).Len() > 1e-12 {
		t.Fatalf("straight arm tip %v, want %v", p.Position, want)
	}
	// Shoulder_lift +90° points the arm down (positive about y turns x
	// towards −z); the hand's x axis then points down too.
	p = a.Forward([]float64{0, math.Pi / 2})
	want = mgl64.Vec3{0, 0.22, 0.5 - 0.63}
	if p.Position.Sub(want).Len() > 1e-12 {
		t.Fatalf("arm down: tip %v, want %v", p.Position, want)
	}
	if x := p.Rotation.Col(0); x.Sub(mgl64.Vec3{0, 0, -1}).Len() > 1e-12 {
		t.Fatalf("arm down: hand x axis %v, want (0, 0, −1)", x)
	}
}

// TestInverseRoundTrip: poses of random joint angles within the limits are
// found again (not necessarily the same angles) from another seed.
func TestInverseRoundTrip(t *testing.T) {
	a := DefaultArm("right")
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 40; n++ {
		var q [NumJoints]float64
		for i := range q {
			q[i] = a.Lower[i] + rng.Float64()*(a.Upper[i]-a.Lower[i])
			q[i] *= 0.7
		}
		target := a.Forward(q[:])
		seed := make([]float64, NumJoints)
		for i := range seed {
			seed[i] = q[i] + 0.3*(rng.Float64()-0.5)
		}
		got, err := a.Inverse(target, seed, Options{})
		if err != nil {
			t.Fatalf("pose of %v from seed %v: %v", q, seed, err)
		}
		reached := a.Forward(got)
		if d := reached.Position.Sub(target.Position).Len(); d > 1e-4 {
			t.Errorf("pose of %v: position off by %g m", q, d)
		}
		if d := rotationError(target.Rotation, reached.Rotation).Len(); d > 1e-3 {
			t.Errorf("pose of %v: orientation off by %g rad", q, d)
		}
		for i, v := range got {
			if v < a.Lower[i] || v > a.Upper[i] {
				t.Errorf("joint %d = %g outside [%g, %g]", i, v, a.Lower[i], a.Upper[i])
			}
		}
	}
}

func TestInversePositionOnly(t *testing.T) {
	a := DefaultArm("left")
	target := Pose{Position: mgl64.Vec3{0.35, 0.3, 0.3}}
	got, err := a.Inverse(target, []float64{0, 1, -1, 0, 0}, Options{OrientationTolerance: -1})
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Forward(got).Position.Sub(target.Position).Len(); d > 1e-4 {
		t.Fatalf("position off by %g m", d)
	}
}

func TestInverseUnreachable(t *testing.T) {
	a := DefaultArm("left")
	far := Pose{Position: a.Mount.Add(mgl64.Vec3{2, 0, 0}), Rotation: mgl64.Ident3()}
	_, err := a.Inverse(far, nil, Options{OrientationTolerance: -1})
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("2 m away: err %v, want *UnreachableError", err)
	}
	// The closest the arm gets is straight out towards it: 2 m less the
	// reach, measured from the shoulder_lift axis 5 cm above the mount.
	want := mgl64.Vec3{2, 0, -0.05}.Len() - a.Reach()
	if math.Abs(ue.PositionError-want) > 1e-3 {
		t.Fatalf("position error %g m, want %g", ue.PositionError, want)
	}
	if ue.Joints == nil || len(ue.Joints) != NumJoints {
		t.Fatalf("closest joints %v", ue.Joints)
	}
	// A joint limit makes a pose within reach unreachable: 0.3 m to the
	// side needs the pan; limited to ±0.1 rad, it leaves the arm's plane
	// 0.3·cos(0.1) ≈ 0.30 m from the target.
	tight := a
	tight.Lower[0], tight.Upper[0] = -0.1, 0.1
	side := Pose{Position: a.Mount.Add(mgl64.Vec3{0, 0.3, 0.05})}
	if _, err := tight.Inverse(side, nil, Options{OrientationTolerance: -1}); !errors.As(err, &ue) {
		t.Fatalf("to the side with the pan limited to ±0.1 rad: err %v, want *UnreachableError", err)
	}
	if ue.PositionError < 0.25 {
		t.Fatalf("to the side with the pan limited: position error %g m, want ≥ 0.25", ue.PositionError)
	}
	for i, v := range ue.Joints {
		if v < tight.Lower[i] || v > tight.Upper[i] {
			t.Errorf("closest joint %d = %g outside the limits", i, v)
		}
	}
}

func TestInverseRejectsBadInput(t *testing.T) {
	a := DefaultArm("left")
	for _, c := range []struct {
		name string
		p    Pose
		seed []float64
	}{
		{"NaN position", Pose{Position: mgl64.Vec3{math.NaN(), 0, 0}, Rotation: mgl64.Ident3()}, nil},
		{"not a rotation", Pose{Position: mgl64.Vec3{0.3, 0, 0.4}, Rotation: mgl64.Ident3().Mul(2)}, nil},
		{"Inf seed", Pose{Position: mgl64.Vec3{0.3, 0, 0.4}, Rotation: mgl64.Ident3()}, []float64{math.Inf(1)}},
	} {
		if _, err := a.Inverse(c.p, c.seed, Options{}); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// TestWithLimits: a joint table's limits replace the defaults, and the
// inverse kinematics stays inside them; bad tables are refused.
func TestWithLimits(t *testing.T) {
	a, err := DefaultArm("left").WithLimits([]float64{-2.5, -1.7, -2.5, -2.5, -2.5}, []float64{2.5, 1.7, 2.5, 2.5, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if a.Upper[4] != 0.5 || a.Lower[1] != -1.7 {
		t.Fatalf("limits %v %v", a.Lower, a.Upper)
	}
	target := DefaultArm("left").Forward([]float64{0.2, 0.5, -0.8, 0.3, 1.2})
	var ue *UnreachableError
	if _, err := a.Inverse(target, nil, Options{}); !errors.As(err, &ue) {
		t.Fatalf("a pose needing wrist_roll 1.2 rad with the roll limited to 0.5: %v, want *UnreachableError", err)
	}
	if ue.Joints[4] > 0.5 {
		t.Errorf("closest joints %v leave the wrist_roll limit", ue.Joints)
	}
	for _, bad := range [][2][]float64{
		{{-1, -1, -1, -1}, {1, 1, 1, 1, 1}},
		{{-1, -1, 1, -1, -1}, {1, 1, 1, 1, 1}},
	} {
		if _, err := DefaultArm("left").WithLimits(bad[0], bad[1]); err == nil {
			t.Errorf("limits %v %v accepted", bad[0], bad[1])
		}
	}
}

// TestInverseFarOutOfReach: a target far beyond the reach leaves the arm
// stretched towards it from any seed, not stuck where it started.
func TestInverseFarOutOfReach(t *testing.T) {
	a := DefaultArm("left")
	far := Pose{Position: mgl64.Vec3{2, 0.22, 0.5}, Rotation: mgl64.Ident3()}
	for _, seed := range [][]float64{nil, {-0.5, 0.2, -0.6, 1.0, -0.4}, {1, -1, 1.5, -1, 1}} {
		_, err := a.Inverse(far, seed, Options{})
		var ue *UnreachableError
		if !errors.As(err, &ue) {
			t.Fatalf("seed %v: %v, want *UnreachableError", seed, err)
		}
		// Straight out along x is the closest pose: 2 − 0.63 m short.
		if want := 2 - a.Reach(); math.Abs(ue.PositionError-want) > 1e-3 || ue.OrientationError > 1e-3 {
			t.Errorf("seed %v: closest pose %.4f m and %.4f rad off, want %.4f m and 0", seed, ue.PositionError, ue.OrientationError, want)
		}
	}
}
