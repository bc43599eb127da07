package balance

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/saint-os/saint/sim/model/geom"
)

const dt = 1e-3

func steps(b *Balance, seconds float64, each func()) {
	for i := 0; i < int(seconds/dt+0.5); i++ {
		if each != nil {
			each()
		}
		b.Step(dt)
	}
}

// Unpowered and released a hair off vertical, the body falls as the
// linearised pendulum says: θ = θ₀·cosh(λt) with λ² = M·g·l/(a₂₂ − a₁₂²/a₁₁),
// while the wheels roll back by a₁₂/a₁₁ of the lean.
func TestFallsAsAnalytic(t *testing.T) {
	p := Default()
	p.WheelFriction = 0
	b := New(p, nil)
	th0 := 1e-5
	b.SetPitch(th0, 0)
	M, l, r := p.BodyMass, p.COMHeight, p.WheelRadius
	a11 := M + 2*p.WheelMass + 2*p.WheelInertia/(r*r)
	a12, a22 := M*l, p.BodyInertia+M*l*l
	lambda := math.Sqrt(M * StandardGravity * l / (a22 - a12*a12/a11))
	steps(b, 1, nil)
	want := th0 * math.Cosh(lambda)
	pitch, _ := b.Pitch()
	if math.Abs(pitch-want)/want > 1e-3 {
		t.Errorf("pitch after 1 s %.6g rad, linear theory %.6g (λ = %.3f /s)", pitch, want, lambda)
	}
	x, _ := b.Position()
	if wantX := -a12 / a11 * (pitch - th0); math.Abs(x-wantX) > 1e-3*math.Abs(wantX) {
		t.Errorf("axle moved %.6g m, momentum says %.6g", x, wantX)
	}
	// Left alone it ends on its bumper, and the IMU sees gravity tilted.
	steps(b, 3, nil)
	if pitch, rate := b.Pitch(); !b.Fallen() || pitch != p.RestAngle || rate != 0 {
		t.Errorf("after 4 s: pitch %.4f rate %.4f fallen %v, want resting at %.4f", pitch, rate, b.Fallen(), p.RestAngle)
	}
	acc, gyr := b.TrueIMU()
	s, c := math.Sincos(p.RestAngle)
	if acc.Sub(geom.Vec3{-StandardGravity * s, 0, StandardGravity * c}).Norm() > 0.01 || gyr.Norm() > 1e-6 {
		t.Errorf("resting IMU accel %v gyro %v", acc, gyr)
	}
}

// A PD pitch loop on the wheel torque keeps the body up through a 15 N·s
// shove, and the shove shows on the IMU.
func TestBalancesAfterPush(t *testing.T) {
	p := Default()
	b := New(p, nil)
	kp, kd := 3*p.BodyMass*StandardGravity*p.COMHeight, 40.0
	ctl := func() {
		th, thd := b.Pitch()
		tau := (kp*th + kd*thd) / 2
		b.SetWheelTorque(Left, tau)
		b.SetWheelTorque(Right, tau)
	}
	steps(b, 0.5, ctl)
	b.ApplyForce(geom.Vec3{150, 0, 0}) // 150 N for 0.1 s
	peakAccel := 0.0
	steps(b, 0.1, func() {
		ctl()
		a, _ := b.TrueIMU()
		peakAccel = math.Max(peakAccel, math.Abs(a[0]))
	})
	b.ApplyForce(geom.Vec3{})
	worst := 0.0
	steps(b, 3, func() {
		ctl()
		th, _ := b.Pitch()
		worst = math.Max(worst, math.Abs(th))
	})
	if b.Fallen() || worst > 0.2 {
		t.Errorf("after the push: fallen %v, worst pitch %.3f rad", b.Fallen(), worst)
	}
	if th, _ := b.Pitch(); math.Abs(th) > 0.01 {
		t.Errorf("pitch %.4f rad 3 s after the push, want settled", th)
	}
	if x, _ := b.Position(); x <= 0 {
		t.Errorf("pushed forward, the base is at x = %.3f", x)
	}
	if peakAccel < 1 {
		t.Errorf("IMU x peak %.3f m/s² during the push", peakAccel)
	}
}

// Opposite torques spin the base: ψ' = W/(2r)·Δτ·t/I_ψ without friction.
func TestYaw(t *testing.T) {
	p := Default()
	p.YawFriction, p.WheelFriction = 0, 0
	b := New(p, nil)
	b.SetWheelTorque(Left, -1)
	b.SetWheelTorque(Right, 1)
	steps(b, 1, nil)
	r := p.WheelRadius
	iPsi := p.YawInertia + p.WheelMass*p.WheelBase*p.WheelBase/2 + p.WheelInertia*p.WheelBase*p.WheelBase/(2*r*r)
	want := p.WheelBase / (2 * r) * 2 / iPsi
	if _, rate := b.Yaw(); math.Abs(rate-want)/want > 1e-6 {
		t.Errorf("yaw rate %.6f rad/s after 1 s, want %.6f", rate, want)
	}
	if pitch, _ := b.Pitch(); pitch != 0 {
		t.Errorf("pure yaw tipped the body to %g", pitch)
	}
	_, g := b.TrueIMU()
	if math.Abs(g[2]-want) > 1e-6 {
		t.Errorf("gyro z %.6f, yaw rate %.6f", g[2], want)
	}
	if b.WheelRate(Left) >= 0 || b.WheelRate(Right) <= 0 {
		t.Errorf("wheel rates %.3f, %.3f: want left backwards, right forwards", b.WheelRate(Left), b.WheelRate(Right))
	}
}

// Current mode gives τ = K_t·I up to the limit; duty mode draws from the
// battery, which sags.
func TestMotorModes(t *testing.T) {
	p := Default()
	b := New(p, nil)
	b.SetWheelCurrent(Left, 10)
	b.SetWheelCurrent(Right, 1000)
	b.Step(dt)
	if b.MotorTorque(Left) != 10*p.Motor.Kt || b.MotorTorque(Right) != p.Motor.MaxCurrent*p.Motor.Kt {
		t.Errorf("torques %.3f %.3f", b.MotorTorque(Left), b.MotorTorque(Right))
	}
	b = New(p, nil)
	b.SetWheelDuty(Left, 0.5)
	b.SetWheelDuty(Right, 0.5)
	b.Step(dt)
	bat := b.Battery()
	if b.BatteryCurrent() <= p.QuiescentA || b.BatteryVoltage() >= bat.OpenCircuit() {
		t.Errorf("duty 0.5 at rest: battery %.2f A, %.2f V (open circuit %.2f)", b.BatteryCurrent(), b.BatteryVoltage(), bat.OpenCircuit())
	}
	b.SetWheelDead(Left, true)
	b.Step(dt)
	if b.MotorTorque(Left) != 0 {
		t.Error("a dead motor gave torque")
	}
}

func TestIMUNoiseSeeded(t *testing.T) {
	a := New(Default(), rand.New(rand.NewPCG(5, 5)))
	c := New(Default(), rand.New(rand.NewPCG(5, 5)))
	for i := 0; i < 100; i++ {
		x1, g1 := a.IMU()
		x2, g2 := c.IMU()
		if x1 != x2 || g1 != g2 {
			t.Fatal("same seed, different IMU readings")
		}
	}
	if x, _ := New(Default(), nil).IMU(); x != (geom.Vec3{0, 0, StandardGravity}) {
		t.Errorf("upright at rest the perfect IMU reads %v", x)
	}
}

func TestBadInput(t *testing.T) {
	b := New(Params{BodyMass: math.NaN()}, nil)
	if b.Params().BodyMass != Default().BodyMass {
		t.Error("invalid parameters kept")
	}
	nan, inf := math.NaN(), math.Inf(1)
	b.SetWheelTorque(Left, nan)
	b.SetWheelCurrent(Right, inf)
	b.SetWheelDuty(Left, nan)
	b.SetWheelDuty(9, 1)
	b.SetWheelDead(-2, true)
	b.ApplyForce(geom.Vec3{inf, 0, 0})
	b.SetPitch(nan, 0)
	b.Step(nan)
	b.Step(-dt)
	b.Step(inf)
	steps(b, 0.1, nil)
	for _, v := range b.AppendState(nil) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("state not finite: %v", b.AppendState(nil))
		}
	}
}

func BenchmarkStep(b *testing.B) {
	m := New(Default(), rand.New(rand.NewPCG(1, 1)))
	m.SetWheelTorque(Left, 1)
	m.SetWheelTorque(Right, 1.2)
	for i := 0; i < b.N; i++ {
		m.Step(dt)
		m.IMU()
	}
}

// On a floor of μ = 0.05 full torque from rest cannot be carried: both
// wheels spin ahead, the floor pushes each with μ·N, and the base moves as
// the two-body equations with those forces say — not as a rolling wheel.
func TestSlidesOnLowFriction(t *testing.T) {
	p := Default()
	p.Friction = 0.05
	p.WheelFriction = 0
	b := New(p, nil)
	tau := 10.0
	b.SetWheelTorque(Left, tau)
	b.SetWheelTorque(Right, tau)
	b.Step(dt)
	M, l, mw := p.BodyMass, p.COMHeight, p.WheelMass
	n := (M + 2*mw) * StandardGravity / 2
	// (M+2m_w)·ẍ + M·l·θ̈ = 2μN; M·l·ẍ + a₂₂·θ̈ = −2τ (upright, at rest).
	a22 := p.BodyInertia + M*l*l
	det := (M+2*mw)*a22 - M*l*M*l
	xdd0 := (2*p.Friction*n*a22 + M*l*2*tau) / det
	for side := Left; side <= Right; side++ {
		if !b.Sliding(side) {
			t.Fatalf("wheel %d grips with %g N·m on μ = %g", side, tau, p.Friction)
		}
		f, normal := b.ContactForce(side)
		if math.Abs(normal-n) > 1e-3*n || math.Abs(f-p.Friction*normal) > 1e-9 {
			t.Errorf("wheel %d: traction %g N, normal %g N; want μ·N = %g of %g", side, f, normal, p.Friction*n, n)
		}
		// I_w·ω̇ = τ − μ·N·r: after one step the rim is ahead of the axle.
		wantSlip := (tau-p.Friction*n*p.WheelRadius)/p.WheelInertia*p.WheelRadius*dt - xdd0*dt
		if s := b.Slip(side); math.Abs(s-wantSlip) > 0.02*wantSlip {
			t.Errorf("wheel %d slip after 1 ms %g m/s, want %g", side, s, wantSlip)
		}
	}
	if _, v := b.Position(); math.Abs(v-xdd0*dt) > 0.02*math.Abs(xdd0*dt) {
		t.Errorf("axle speed after 1 ms %g m/s, two-body equations say %g", v, xdd0*dt)
	}
	// Rolling, the same torque would have driven the axle at τ/r per wheel.
	steps(b, 0.05, nil)
	if s := b.Slip(Left); !(s > 0.1) {
		t.Errorf("slip after 50 ms %g m/s, want the wheel spinning well ahead", s)
	}
}

// On the default floor (μ = 1) the same torque rolls: no slip, the
// traction within μ·N, and the wheel's rate the axle's speed over r.
func TestGripsOnDefaultFloor(t *testing.T) {
	b := New(Default(), nil)
	b.SetPitch(0.05, 0)
	steps(b, 0.5, func() {
		pitch, rate := b.Pitch()
		tau := 40*pitch + 5*rate
		b.SetWheelTorque(Left, tau)
		b.SetWheelTorque(Right, tau)
	})
	for side := Left; side <= Right; side++ {
		if b.Sliding(side) || b.Slip(side) != 0 {
			t.Errorf("wheel %d slides (%g m/s) on μ = 1", side, b.Slip(side))
		}
		if f, n := b.ContactForce(side); math.Abs(f) > n {
			t.Errorf("wheel %d traction %g N beyond μ·N = %g", side, f, n)
		}
	}
}

// A patch of ice at 0.1–1 m: the wheels roll up to it, spin on it under
// the same torque, and grip again beyond it.
func TestPatchUnderOneWheel(t *testing.T) {
	p := Default()
	p.Floor = []Patch{{From: 0.1, To: 1, Mu: 0.02}}
	b := New(p, nil)
	if mu := b.FrictionAt(0.5); mu != 0.02 {
		t.Fatalf("μ at 0.5 m = %g, want the patch's 0.02", mu)
	}
	if mu := b.FrictionAt(1); mu != DefaultFriction {
		t.Fatalf("μ at 1 m = %g, want the floor's %g", mu, DefaultFriction)
	}
	b.SetPose(0, 0, math.Pi/2) // across the patch's edge: the left wheel at x = −0.225, the right at +0.225
	b.SetWheelTorque(Left, 8)
	b.SetWheelTorque(Right, 8)
	b.Step(dt)
	if b.Sliding(Left) || !b.Sliding(Right) {
		t.Errorf("sliding left %v right %v; want only the right wheel, on the ice", b.Sliding(Left), b.Sliding(Right))
	}
	if _, rate := b.Yaw(); !(rate < 0) {
		t.Errorf("yaw rate %g: the gripping left wheel should turn the base right", rate)
	}
}

func TestSetFloorRefusesBadPatches(t *testing.T) {
	b := New(Default(), nil)
	for _, floor := range [][]Patch{{{From: 1, To: 0, Mu: 0.1}}, {{From: 0, To: 1, Mu: -1}}, {{From: math.NaN(), To: 1, Mu: 1}}} {
		if err := b.SetFloor(floor); err == nil {
			t.Errorf("SetFloor(%v) accepted", floor)
		}
	}
	if err := b.SetFloor([]Patch{{From: 0, To: 1, Mu: 0.1}}); err != nil {
		t.Error(err)
	}
}

// On a frictionless floor a wheel under full current spins up only to
// where its back-EMF meets the pack's voltage, as a VESC's current loop
// runs out of voltage.
func TestSpinningWheelLimitedByBackEMF(t *testing.T) {
	p := Default()
	p.Friction = 0
	b := New(p, nil)
	steps(b, 3, func() {
		b.SetPitch(0, 0) // held upright
		b.SetWheelCurrent(Left, p.Motor.MaxCurrent)
	})
	top := b.BatteryVoltage() / p.Motor.Ke
	if w := b.WheelRate(Left); w > top*1.001 || w < 0.9*top {
		t.Errorf("free-spinning wheel at %g rad/s, want just under V/K_e = %g", w, top)
	}
}

// With its wheels spinning on a wet patch the IMU feels the body, not the
// wheels: its reading is the specific force from the second difference of
// its own path in the world, as on a bump (TestBumpIMU), while the rims
// accelerate many times faster than the axle — what a wheel encoder or the
// VESC's ERPM sees and an accelerometer does not.
func TestIMUWhileSliding(t *testing.T) {
	p := Default()
	p.Floor = []Patch{{From: -1, To: 1, Mu: 0.05}}
	b := New(p, nil)
	pos := func() geom.Vec3 {
		s, c := math.Sincos(b.x[sPitch])
		return geom.Vec3{b.x[sPosX] + p.IMUHeight*s, 0, p.IMUHeight * c}
	}
	b.SetWheelTorque(Left, 10)
	b.SetWheelTorque(Right, 10)
	var prev, cur, reading geom.Vec3
	var pitch, worst, axle float64
	for i := 0; i < 150; i++ {
		prev, cur = cur, pos()
		b.Step(dt)
		if !b.Sliding(Left) || !b.Sliding(Right) {
			t.Fatalf("step %d: the wheels grip (slip %g, %g m/s); want them spinning on μ = 0.05", i, b.Slip(Left), b.Slip(Right))
		}
		next := pos()
		if i >= 1 {
			a := next.Sub(cur.Scale(2)).Add(prev).Scale(1 / (dt * dt))
			want := geom.RotY(pitch).ApplyT(a.Add(geom.Vec3{0, 0, StandardGravity}))
			worst = math.Max(worst, want.Sub(reading).Norm())
			axle = math.Max(axle, math.Abs(a[0]))
		}
		reading, _ = b.TrueIMU()
		pitch = b.x[sPitch]
	}
	t.Logf("IMU against its path: up to %.3g m/s² apart; slip %.3g m/s; axle up to %.3g m/s²", worst, b.Slip(Left), axle)
	if worst > 0.05 {
		t.Errorf("IMU differs from its path's second difference by up to %.3g m/s² while sliding", worst)
	}
	// The rims: r·ω̇ = r·(τ − μ·N·r)/I_w, about 78 m/s², against the
	// axle's few.
	rim := p.WheelRadius * (10 - 0.05*(p.BodyMass+2*p.WheelMass)*StandardGravity/2*p.WheelRadius) / p.WheelInertia
	if s := b.Slip(Left); !(s > 0.1*rim*0.15) || !(axle < rim/20) {
		t.Errorf("slip %g m/s after 0.15 s, IMU's path accelerating up to %g m/s²; rims at %g m/s²", s, axle, rim)
	}
}
