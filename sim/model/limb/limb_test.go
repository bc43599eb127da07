package limb

import (
	"math"
	"testing"
)

// A straight leg turned by θ at the hip: the torque that holds it is each
// body's weight times its lever in front of the hip, worked out by hand
// from the bodies' offsets (body frames stay parallel: every other joint
// at 0).
func TestLegGravityTorqueByHand(t *testing.T) {
	p, err := Humanoid(LegLeft)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []float64{-0.9, -0.3, 0.4} {
		q := make([]float64, l.Len())
		q[0] = th
		l.SetPositions(q)
		var want, depth float64
		for _, j := range p.Joints {
			depth -= j.Body.Offset[2] // every offset is straight down the leg
			a, d := j.Body.COM[0], depth-j.Body.COM[2]
			x := a*math.Cos(th) - d*math.Sin(th) // R_y(θ)·(a, 0, −d)
			want += -x * j.Body.Mass * StandardGravity
		}
		if got := l.GravityTorques()[0]; math.Abs(got-want) > 1e-9 {
			t.Errorf("θ %.1f: hip_pitch holds %.6f N·m, want %.6f", th, got, want)
		}
	}
}

// Without torque a leg let go in front swings back through the vertical,
// loses energy to friction, and hangs still; every joint stays within its
// stops.
func TestLegSwingsAndSettles(t *testing.T) {
	p, _ := Humanoid(LegRight)
	l, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	q := make([]float64, l.Len())
	q[0], q[3] = -0.6, 0.5
	l.SetPositions(q)
	peak := 0.0
	for k := range 10000 {
		l.Step(1e-3)
		if k < 2000 {
			peak = math.Max(peak, l.Angle(0))
		}
		for i, j := range p.Joints {
			if a := l.Angle(i); a < j.Lower-1e-9 || a > j.Upper+1e-9 {
				t.Fatalf("%s at %.3f, outside [%v, %v]", j.Name, a, j.Lower, j.Upper)
			}
		}
	}
	if !(peak > 0.05 && peak < 0.6) {
		t.Errorf("the swing peaked at %.3f rad behind, want past the vertical and short of 0.6", peak)
	}
	if math.Abs(l.Angle(0)) > 0.05 || math.Abs(l.Rate(0)) > 0.01 {
		t.Errorf("after 10 s hip_pitch at %.3f rad, %.3f rad/s; want hanging still", l.Angle(0), l.Rate(0))
	}
}

// The actuator's frame: a reversed mount reads and pushes the other way.
func TestMount(t *testing.T) {
	p, _ := Humanoid(LegRight)
	l, _ := New(p)
	q := make([]float64, l.Len())
	q[1] = 0.2
	l.SetPositions(q)
	if a, _ := l.MotorState(1); a != -0.2 {
		t.Errorf("right hip_roll's actuator reads %v, want -0.2", a)
	}
	l.SetMotorTorque(1, 3)
	if l.Torque(1) != -3 {
		t.Errorf("right hip_roll's joint torque %v, want -3", l.Torque(1))
	}
	if _, err := Humanoid("tail"); err == nil {
		t.Error("an unknown limb was accepted")
	}
}

// BenchmarkLegStep is one 1 ms physics step of a six-joint leg moving
// under torque (the rigid chain's CRBA and RNEA twice, the midpoint rule).
func BenchmarkLegStep(b *testing.B) {
	p, _ := Humanoid(LegLeft)
	l, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	q := make([]float64, l.Len())
	q[0], q[3] = -0.6, 1.2
	l.SetPositions(q)
	for i := range l.Len() {
		l.SetMotorTorque(i, 0.5)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Step(1e-3)
	}
}
