package limb

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/sim/model/geom"
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

// Static friction: a leg hanging unpowered comes to rest and stays there
// exactly; a torque beyond a joint's Coulomb friction moves it again.
func TestLegSticksAndBreaksFree(t *testing.T) {
	p, _ := Humanoid(LegLeft)
	l, _ := New(p)
	for range 60000 {
		l.Step(1e-3)
	}
	rest := l.Positions()
	for range 5000 {
		l.Step(1e-3)
	}
	for i, q := range l.Positions() {
		if q != rest[i] || l.Rate(i) != 0 {
			t.Fatalf("%s moved from %v to %v (%v rad/s) at rest", p.Joints[i].Name, rest[i], q, l.Rate(i))
		}
	}
	// Just under the hip's friction: still held; just over: it moves.
	hold := l.GravityTorques()[0]
	l.SetMotorTorque(0, hold+0.9*p.Joints[0].Coulomb)
	l.Step(0.1)
	if l.Angle(0) != rest[0] {
		t.Errorf("a torque within the friction moved the hip to %v", l.Angle(0))
	}
	l.SetMotorTorque(0, hold+3*p.Joints[0].Coulomb)
	l.Step(0.1)
	if !(l.Angle(0) > rest[0]+1e-4) {
		t.Errorf("a torque beyond the friction left the hip at %v (rest %v)", l.Angle(0), rest[0])
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

// BenchmarkLegStep is one 1 ms physics step of a six-joint leg swinging
// under a 1 Hz hip torque (the rigid chain's CRBA and RNEA twice, the
// midpoint rule).
func BenchmarkLegStep(b *testing.B) {
	p, _ := Humanoid(LegLeft)
	l, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		l.SetMotorTorque(0, 6*math.Sin(2*math.Pi*float64(k)*1e-3))
		l.Step(1e-3)
		k++
	}
}

// BenchmarkLegStepHanging is the step of an unpowered leg hanging still,
// held by static friction: its dynamics reused (rigid.Chain.UpdateNear).
func BenchmarkLegStepHanging(b *testing.B) {
	p, _ := Humanoid(LegLeft)
	l, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	for range 20000 {
		l.Step(1e-3)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Step(1e-3)
	}
}

// The joint origins the rigid chain computes its dynamics at are those the
// kinematics package gives clients to draw the limb with, at any pose: the
// model has no geometry of its own.
func TestJointOriginsAreTheKinematics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, inst := range Instances() {
		p, err := Humanoid(inst)
		if err != nil {
			t.Fatal(err)
		}
		l, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		k, err := kinematics.HumanoidLimb(inst)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			q := make([]float64, l.Len())
			for i, j := range p.Joints {
				q[i] = j.Lower + rng.Float64()*(j.Upper-j.Lower)
				if j.Name != k.Joints[i].Name {
					t.Fatalf("%s joint %d is %s, the kinematics' %s", inst, i, j.Name, k.Joints[i].Name)
				}
			}
			l.chain.Update(q, make([]float64, len(q)))
			want := k.Chain(q)
			for i := range q {
				if d := geom.Vec3(want[i]).Sub(l.chain.Origin(i)).Norm(); d > 1e-12 {
					t.Fatalf("%s at %v: joint %s at %v, the kinematics say %v", inst, q, p.Joints[i].Name, l.chain.Origin(i), want[i])
				}
			}
		}
	}
}
