package servo

import (
	"math"
	"testing"
)

const dt = 1e-3

func deg(d float64) float64 { return d * math.Pi / 180 }

func run(s *Servo, seconds, load, friction float64, ext func(theta float64) float64) {
	for i := 0; i < int(seconds/dt+0.5); i++ {
		t := 0.0
		if ext != nil {
			t = ext(s.Angle())
		}
		s.Step(dt, load, friction, t)
	}
}

// Pulses map linearly onto the travel, and the servo gets there.
func TestPulseToAngle(t *testing.T) {
	for _, c := range []struct{ us, want float64 }{
		{1500, 0}, {2500, deg(90)}, {500, deg(-90)}, {1000, deg(-45)}, {2000, deg(45)},
		{2700, deg(90)}, {400, deg(-90)}, // beyond the range: clamped
	} {
		s := New(MG996R())
		s.SetPWM(50, c.us/20000, true)
		run(s, 1, 1e-3, 0, nil)
		db := deg(180) * 5 / 2000 / 2 // half the deadband, rad
		if math.Abs(s.Angle()-c.want) > db+1e-9 || math.Abs(s.Rate()) > 1e-3 {
			t.Errorf("%v µs: settled at %.4f rad (rate %.4f), want %.4f ± %.4f", c.us, s.Angle(), s.Rate(), c.want, db)
		}
	}
}

// Unloaded, a large step runs at close to the no-load speed and never
// beyond it; 60° take about the datasheet's 0.17 s.
func TestMaxSpeed(t *testing.T) {
	p := MG996R()
	s := New(p)
	s.SetPulse(500)
	run(s, 1, 0, 0, nil)
	s.SetPulse(2500)
	peak, t60 := 0.0, 0.0
	start := s.Angle()
	for i := 1; i <= 1000; i++ {
		s.Step(dt, 0, 0, 0)
		peak = math.Max(peak, s.Rate())
		if t60 == 0 && s.Angle()-start >= deg(60) {
			t60 = float64(i) * dt
		}
	}
	if peak > p.NoLoadSpeed*(1+1e-9) || peak < 0.95*p.NoLoadSpeed {
		t.Errorf("peak speed %.3f rad/s, want just under the no-load %.3f", peak, p.NoLoadSpeed)
	}
	if t60 < 0.17 || t60 > 0.17*1.25 {
		t.Errorf("60° in %.3f s, want 0.17 s (+25 %% for acceleration)", t60)
	}
}

// A lever under gravity: a servo holds a load below its stall torque with
// the error its gain implies, and gives way to a load above it.
func TestGravityLoadAndTorqueLimit(t *testing.T) {
	p := MG996R()
	gravity := func(tauMax float64) func(float64) float64 {
		return func(theta float64) float64 { return -tauMax * math.Cos(theta) } // lever horizontal at 0
	}
	s := New(p)
	s.SetPulse(1500)
	run(s, 2, 0.01, 0, gravity(0.5*p.StallTorque))
	sag := -s.Angle()
	if want := 0.5 * p.FullDriveError; math.Abs(sag-want) > 0.1*want {
		t.Errorf("half-stall load sags %.4f rad, want %.4f (half the full-drive error)", sag, want)
	}
	if got := s.Torque(); math.Abs(got-0.5*p.StallTorque) > 1e-3 {
		t.Errorf("holding torque %.4f N·m, want %.4f", got, 0.5*p.StallTorque)
	}
	s = New(p)
	s.SetPulse(1500)
	// Hanging from a horizontal lever the load falls until cos θ·1.5 = 1.
	run(s, 2, 0.01, 0, gravity(1.5*p.StallTorque))
	if want := -math.Acos(1 / 1.5); math.Abs(s.Angle()-want) > deg(1) {
		t.Errorf("1.5× stall load on a lever: angle %.3f, want %.3f where gravity's torque falls to stall", s.Angle(), want)
	}
	s = New(p)
	s.SetPulse(1500)
	run(s, 2, 0.01, 0, func(float64) float64 { return -1.5 * p.StallTorque })
	if lo, _ := s.Limits(); s.Angle() != lo {
		t.Errorf("1.5× stall constant load: angle %.3f, want on the lower stop %.3f", s.Angle(), lo)
	}
	// Limited to a third of stall torque, a half-stall load wins too.
	s = New(p)
	s.SetPulse(1500)
	s.SetTorqueLimit(1.0 / 3)
	run(s, 2, 0.01, 0, func(float64) float64 { return -0.5 * p.StallTorque })
	if lo, _ := s.Limits(); s.Angle() != lo || math.Abs(s.Torque()) > p.StallTorque/3+1e-9 {
		t.Errorf("torque-limited: angle %.3f torque %.3f, want on the stop with at most %.3f", s.Angle(), s.Torque(), p.StallTorque/3)
	}
}

// Pulse changes inside the deadband do not move the output; beyond it they do.
func TestDeadband(t *testing.T) {
	s := New(MG996R())
	s.SetPulse(1500)
	run(s, 0.5, 1e-3, 0, nil)
	a0 := s.Angle()
	s.SetPulse(1502) // half of the 5 µs deadband is 2.5 µs
	run(s, 0.5, 1e-3, 0, nil)
	if s.Angle() != a0 {
		t.Errorf("a 2 µs change moved the output from %g to %g", a0, s.Angle())
	}
	s.SetPulse(1520)
	run(s, 0.5, 1e-3, 0, nil)
	if s.Angle() <= a0 {
		t.Errorf("a 20 µs change did not move the output (%g)", s.Angle())
	}
}

// Without a valid signal, or dead, or disabled, the servo is limp.
func TestLimp(t *testing.T) {
	p := MG996R()
	for name, cut := range map[string]func(*Servo){
		"pwm off":      func(s *Servo) { s.SetPWM(50, 0.075, false) },
		"no frame":     func(s *Servo) { s.SetPWM(5, 0.075, true) },
		"short pulse":  func(s *Servo) { s.SetPulse(100) },
		"dead":         func(s *Servo) { s.SetDead(true) },
		"disabled":     func(s *Servo) { s.SetTorqueEnabled(false) },
		"released":     func(s *Servo) { s.Release() },
		"duty is 100%": func(s *Servo) { s.SetPWM(50, 1, true) },
	} {
		s := New(p)
		s.SetPulse(1500)
		run(s, 0.2, 0.01, 0, nil)
		cut(s)
		run(s, 2, 0.01, 0, func(float64) float64 { return -0.2 })
		if lo, _ := s.Limits(); s.Angle() != lo || s.Torque() != 0 {
			t.Errorf("%s: angle %.3f torque %.3f, want limp on the stop %.3f", name, s.Angle(), s.Torque(), lo)
		}
	}
}

// A speed limit makes the output move at that speed.
func TestSpeedLimit(t *testing.T) {
	s := New(STS3215())
	s.SetGoal(0)
	s.SetSpeedLimit(1)
	s.SetGoal(1)
	run(s, 0.5, 1e-3, 0, nil)
	if math.Abs(s.Angle()-0.5) > 0.05 {
		t.Errorf("after 0.5 s at 1 rad/s: %.3f rad, want ~0.5", s.Angle())
	}
	run(s, 1, 1e-3, 0, nil)
	if math.Abs(s.Angle()-1) > deg(0.5) {
		t.Errorf("settled at %.4f, want 1", s.Angle())
	}
}

// Nothing a caller passes can make the state non-finite or panic.
func TestBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	s := New(Params{Travel: nan, StallTorque: -1, NoLoadSpeed: inf, MinPulseUS: 3000, MaxPulseUS: 100, DeadbandUS: nan, MinAngle: inf})
	s.SetPulse(1500)
	for _, f := range []func(){
		func() { s.SetPWM(nan, 0.5, true) },
		func() { s.SetPWM(50, nan, true) },
		func() { s.SetPWM(-50, -1, true) },
		func() { s.SetPWM(inf, inf, true) },
		func() { s.SetPulse(nan) },
		func() { s.SetPulse(-inf) },
		func() { s.SetGoal(nan) },
		func() { s.SetGoal(1e300) },
		func() { s.SetSpeedLimit(nan) },
		func() { s.SetSpeedLimit(-3) },
		func() { s.SetTorqueLimit(nan) },
		func() { s.SetTorqueLimit(7) },
		func() { s.SetAngle(inf) },
		func() { s.Step(nan, 0, 0, 0) },
		func() { s.Step(-1, 0, 0, 0) },
		func() { s.Step(dt, nan, inf, nan) },
		func() { s.Step(dt, -1, -1, inf) },
		func() { s.Step(10, 0, 0, 0) },
	} {
		f()
		s.Step(dt, 1e-3, 0, 0)
		if math.IsNaN(s.Angle()) || math.IsInf(s.Angle(), 0) || math.IsNaN(s.Rate()) || math.IsNaN(s.Torque()) {
			t.Fatalf("state became non-finite: %v %v %v", s.Angle(), s.Rate(), s.Torque())
		}
	}
}

func BenchmarkStep(b *testing.B) {
	s := New(MG996R())
	s.SetPulse(2000)
	for i := 0; i < b.N; i++ {
		s.Step(dt, 1e-3, 0, -0.1)
	}
}

// A torque-driven output accelerates as τ/J against its load, clamped to
// the stall torque, and is cut by torque enable and death.
func TestDirectTorque(t *testing.T) {
	p := STS3215()
	s := New(p)
	s.SetDirectTorque(true, 0.5)
	const load = 0.01
	s.Step(0.01, load, 0, 0)
	j := p.RotorInertia + load
	if want := 0.5 / j * 0.01; math.Abs(s.Rate()-want) > 1e-9 || s.Torque() != 0.5 {
		t.Errorf("rate %v, torque %v; want %v, 0.5", s.Rate(), s.Torque(), want)
	}
	s.SetDirectTorque(true, 1e6)
	s.Step(1e-4, load, 0, 0)
	if s.Torque() != p.StallTorque {
		t.Errorf("torque %v, want the stall torque %v", s.Torque(), p.StallTorque)
	}
	s.SetTorqueEnabled(false)
	s.Step(1e-4, load, 0, 0)
	if s.Torque() != 0 {
		t.Errorf("disabled: torque %v", s.Torque())
	}
	s.SetTorqueEnabled(true)
	s.SetDirectTorque(false, 0)
	s.Step(1e-4, load, 0, 0)
	if s.Torque() != 0 { // no command: the position loop is limp
		t.Errorf("back on the position loop with no goal: torque %v", s.Torque())
	}
}

// The drive is continuous in the error: it starts from zero at the
// deadband's edge and joins the proportional law at twice the deadband,
// so a load below the first step still finds a pose where drive and load
// balance (a jump there made the output hunt across the edge).
func TestDriveContinuousAtDeadbandEdge(t *testing.T) {
	for _, p := range []Params{MG996R(), SG90(), STS3215()} {
		s := New(p)
		s.SetGoal(0)
		db := p.DeadbandUS / 2 / (p.MaxPulseUS - p.MinPulseUS) * p.Travel
		gain := p.StallTorque / p.FullDriveError // N·m per rad beyond twice the deadband
		const eps = 1e-9
		for _, e := range []float64{db, 2 * db} {
			below, above := s.DriveTorque(-(e-eps), 0), s.DriveTorque(-(e+eps), 0)
			if math.Abs(above-below) > 4*gain*eps {
				t.Errorf("%+v: drive jumps by %g N·m at error %g rad", p, above-below, e)
			}
		}
		if got := s.DriveTorque(-db/2, 0); got != 0 {
			t.Errorf("inside the deadband: drive %g, want 0", got)
		}
		if got, want := s.DriveTorque(-3*db, 0), gain*3*db; math.Abs(got-want) > 1e-12 {
			t.Errorf("beyond twice the deadband: drive %g, want the proportional %g", got, want)
		}
		// A load just below the old first step: the output settles and stops.
		tau := 0.9 * gain * db
		s = New(p)
		s.SetGoal(0)
		run(s, 3, 1e-3, 0, func(float64) float64 { return -tau })
		if math.Abs(s.Rate()) > 1e-6 || math.Abs(s.Torque()-tau) > 1e-6 {
			t.Errorf("%+v: load %g N·m: rate %g, drive %g; want at rest with the drive balancing the load", p, tau, s.Rate(), s.Torque())
		}
	}
}
