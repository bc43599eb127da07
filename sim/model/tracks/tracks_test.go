package tracks

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/geom"
)

const dt = 1e-3

func drive(t *Tracks, seconds, left, right float64) {
	t.SetDrive(Left, left, true)
	t.SetDrive(Right, right, true)
	for i := 0; i < int(seconds/dt+0.5); i++ {
		t.Step(dt)
	}
}

func ideal() Params {
	p := Default()
	p.ContactLength = 0 // no turning resistance: an ideal differential drive
	return p
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// Equal duty: a straight line along +x, at the track speed, and the ground
// distance matches the tracks' travel and the encoders within 1 %.
func TestStraightLine(t *testing.T) {
	tr := New(Default())
	drive(tr, 3, 0.5, 0.5)
	x, y, h := tr.Pose()
	v, vy, r := tr.Velocity()
	if math.Abs(y) > 1e-9 || math.Abs(h) > 1e-9 || math.Abs(vy) > 1e-9 || math.Abs(r) > 1e-9 {
		t.Errorf("straight run drifted: y %g heading %g vy %g yaw rate %g", y, h, vy, r)
	}
	if !near(v, tr.TrackSpeed(Left), 0.01) {
		t.Errorf("body speed %.4f m/s, track speed %.4f: more than 1 %% slip", v, tr.TrackSpeed(Left))
	}
	if d := tr.TrackTravel(Left); !near(x, d, 0.01) {
		t.Errorf("ground distance %.4f m, track travel %.4f m", x, d)
	}
	counts := float64(tr.EncoderCount(Left))
	if want := tr.TrackTravel(Left) / (2 * math.Pi * tr.p.SprocketRadius) * tr.p.EncoderCPR; math.Abs(counts-want) > 1 {
		t.Errorf("encoder %v counts, travel implies %.1f", counts, want)
	}
	// Steady state of the motor: ω = (d·V − R·i)/Kₑ with i = (b·ω + load)/Kₜ.
	p := tr.p.Motor
	i := tr.MotorCurrent(Left)
	if want := (0.5*tr.BatteryVoltage() - p.R*i) / p.Ke; !near(tr.MotorSpeed(Left), want, 1e-3) {
		t.Errorf("motor speed %.3f rad/s, circuit says %.3f", tr.MotorSpeed(Left), want)
	}
}

// Opposite duty on an ideal drive: spin in place at (v_R − v_L)/B.
func TestSpinInPlace(t *testing.T) {
	tr := New(ideal())
	drive(tr, 2, -0.3, 0.3)
	x, y, _ := tr.Pose()
	_, _, r := tr.Velocity()
	want := (tr.TrackSpeed(Right) - tr.TrackSpeed(Left)) / tr.p.Gauge
	if math.Hypot(x, y) > 1e-6 || !near(r, want, 0.01) {
		t.Errorf("spin: centre moved to (%g, %g), yaw rate %.4f, kinematics %.4f", x, y, r, want)
	}
	// Real tracks scrape sideways: the same duty turns more slowly and
	// draws more current.
	sk := New(Default())
	drive(sk, 2, -0.3, 0.3)
	if _, _, rs := sk.Velocity(); rs >= 0.9*r || sk.MotorCurrent(Right) <= tr.MotorCurrent(Right) {
		t.Errorf("skid-steer spin: yaw rate %.3f (ideal %.3f), current %.2f A (ideal %.2f)", rs, r, sk.MotorCurrent(Right), tr.MotorCurrent(Right))
	}
}

// Unequal duty on an ideal drive: an arc of radius B/2·(v_R+v_L)/(v_R−v_L);
// every point of the steady trajectory lies on that circle.
func TestArcRadius(t *testing.T) {
	tr := New(ideal())
	drive(tr, 2, 0.3, 0.5)
	vl, vr := tr.TrackSpeed(Left), tr.TrackSpeed(Right)
	want := tr.p.Gauge / 2 * (vr + vl) / (vr - vl)
	v, _, r := tr.Velocity()
	if !near(v/r, want, 0.01) {
		t.Errorf("radius v/ψ' = %.4f m, kinematics %.4f m", v/r, want)
	}
	x0, y0, h0 := tr.Pose()
	cx, cy := x0-want*math.Sin(h0), y0+want*math.Cos(h0) // centre to the left
	worst := 0.0
	for i := 0; i < 4000; i++ {
		tr.Step(dt)
		x, y, _ := tr.Pose()
		worst = math.Max(worst, math.Abs(math.Hypot(x-cx, y-cy)-want)/want)
	}
	if worst > 0.01 {
		t.Errorf("trajectory strays %.3g from the circle of radius %.3f m, want < 1 %%", worst, want)
	}
}

// Accelerating draws current and the battery sags by R_int·I.
func TestBatterySag(t *testing.T) {
	tr := New(Default())
	drive(tr, 0.02, 1, 1)
	i := tr.BatteryCurrent()
	b := tr.Battery()
	if i < 10 || math.Abs(tr.BatteryVoltage()-(b.OpenCircuit()-b.Params().Resistance*i)) > 1e-9 {
		t.Errorf("accelerating: %.2f A, %.3f V (open circuit %.3f)", i, tr.BatteryVoltage(), b.OpenCircuit())
	}
	if want := tr.p.QuiescentA + tr.MotorCurrent(Left) + tr.MotorCurrent(Right); math.Abs(i-want) > 1e-9 {
		t.Errorf("battery current %.3f A, want quiescent plus both motors at full duty %.3f A", i, want)
	}
	soc := b.SoC()
	drive(tr, 1, 1, 1)
	if b.SoC() >= soc {
		t.Error("driving did not discharge the battery")
	}
}

// Disabled bridges coast: no current, the base rolls to a stop.
func TestCoast(t *testing.T) {
	tr := New(Default())
	drive(tr, 1, 0.5, 0.5)
	tr.SetDrive(Left, 0.5, false)
	tr.SetDrive(Right, 0.5, false)
	// Rolling resistance against the base and its reflected rotor inertia
	// (12 kg a side): about 0.13 m/s², so 10 s is plenty.
	for i := 0; i < 10000; i++ {
		tr.Step(dt)
	}
	v, _, _ := tr.Velocity()
	if tr.MotorCurrent(Left) != 0 || math.Abs(v) > 0.01 {
		t.Errorf("coasting: current %g A, speed %g m/s", tr.MotorCurrent(Left), v)
	}
	tr.SetDrive(Left, 1, true)
	tr.SetMotorDead(Left, true)
	tr.Step(dt)
	if tr.MotorCurrent(Left) != 0 {
		t.Error("a dead motor drew current")
	}
}

// A sideways shove harder than the tracks' grip slides the base; a gentle
// one does not.
func TestPush(t *testing.T) {
	tr := New(Default())
	grip := tr.p.LateralFriction * tr.p.Mass * StandardGravity
	tr.ApplyForce(geom.Vec3{0, 0.5 * grip, 0})
	for i := 0; i < 500; i++ {
		tr.Step(dt)
	}
	if _, y, _ := tr.Pose(); math.Abs(y) > 0.005 {
		t.Errorf("half-grip push slid the base %.4f m", y)
	}
	tr.ApplyForce(geom.Vec3{0, 2 * grip, 0})
	for i := 0; i < 500; i++ {
		tr.Step(dt)
	}
	if _, y, _ := tr.Pose(); y < 0.5 {
		t.Errorf("twice-grip push for 0.5 s slid the base only %.4f m", y)
	}
}

func TestBadInput(t *testing.T) {
	tr := New(Params{Mass: -1})
	if tr.Params().Mass != Default().Mass {
		t.Error("invalid parameters kept")
	}
	nan, inf := math.NaN(), math.Inf(1)
	tr.SetDrive(Left, nan, true)
	tr.SetDrive(Right, inf, true)
	tr.SetDrive(7, 1, true)
	tr.SetMotorDead(-1, true)
	tr.ApplyForce(geom.Vec3{nan, 0, 0})
	tr.SetPose(nan, 0, 0)
	tr.Step(nan)
	tr.Step(-1)
	tr.Step(inf)
	for i := 0; i < 100; i++ {
		tr.Step(dt)
	}
	for _, v := range tr.AppendState(nil) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("state not finite: %v", tr.AppendState(nil))
		}
	}
}

func BenchmarkStep(b *testing.B) {
	tr := New(Default())
	tr.SetDrive(Left, 0.4, true)
	tr.SetDrive(Right, 0.6, true)
	for i := 0; i < b.N; i++ {
		tr.Step(dt)
	}
}

// The step is small enough: a 2 s manoeuvre (accelerating, turning) at the
// world's 1 ms step ends within 0.1 % of the same run at 0.05 ms.
func TestStepConvergence(t *testing.T) {
	pose := func(dt float64) (float64, float64, float64, float64) {
		tr := New(Default())
		tr.SetDrive(Left, 0.3, true)
		tr.SetDrive(Right, 0.8, true)
		for i := 0; i < int(2/dt+0.5); i++ {
			tr.Step(dt)
		}
		x, y, h := tr.Pose()
		return x, y, h, tr.MotorCurrent(Right)
	}
	x1, y1, h1, i1 := pose(1e-3)
	x2, y2, h2, i2 := pose(5e-5)
	if math.Hypot(x1-x2, y1-y2) > 1e-3*math.Hypot(x2, y2) || math.Abs(h1-h2) > 1e-3*math.Abs(h2) || math.Abs(i1-i2) > 1e-3*math.Abs(i2) {
		t.Errorf("1 ms: (%.5f, %.5f, %.5f) %.4f A; 0.05 ms: (%.5f, %.5f, %.5f) %.4f A", x1, y1, h1, i1, x2, y2, h2, i2)
	}
}

// A base at rest skips the integration: its state, battery and outputs
// are what integrating gives, bit for bit, through rest, a push, driving
// and braking.
func TestRestShortcutChangesNothing(t *testing.T) {
	fast, full := New(Default()), New(Default())
	full.alwaysIntegrate = true
	for step := range 6000 {
		for _, b := range []*Tracks{fast, full} {
			switch step {
			case 1000:
				b.ApplyForce(geom.Vec3{40, 0, 0})
			case 1200:
				b.ApplyForce(geom.Vec3{})
			case 2500:
				b.SetDrive(Left, 0.5, true)
				b.SetDrive(Right, 0.5, true)
			case 3500:
				b.SetDrive(Left, 0, true)
				b.SetDrive(Right, 0, true)
			}
			b.Step(1e-3)
		}
		if fast.x != full.x || fast.bat.SoC() != full.bat.SoC() || fast.BatteryCurrent() != full.BatteryCurrent() ||
			fast.volts != full.volts || fast.travel != full.travel {
			t.Fatalf("step %d: shortcut %v (SoC %v), integrated %v (SoC %v)", step, fast.x, fast.bat.SoC(), full.x, full.bat.SoC())
		}
		if step == 999 && (!fast.atRest() || fast.bat.SoC() >= 1) {
			t.Fatalf("before the push: at rest %v, SoC %v (the battery must drain at rest)", fast.atRest(), fast.bat.SoC())
		}
	}
}

// The contact law: slipping one way it is the regularised Coulomb friction
// of that direction; slipping both ways the force stays on the friction
// ellipse (within it near zero slip) and dissipates.
func TestContactForce(t *testing.T) {
	p := Default()
	const n = 24.5
	for _, s := range []float64{-1, -0.03, 0.001, 0.02, 0.5} {
		fx, fy := p.ContactForce(n, s, 0)
		if want := p.Friction * n * math.Tanh(s/p.SlipVelocity); math.Abs(fx-want) > 1e-12 || fy != 0 {
			t.Errorf("slip %g along: force (%g, %g), want (%g, 0)", s, fx, fy, want)
		}
		fx, fy = p.ContactForce(n, 0, s)
		if want := p.LateralFriction * n * math.Tanh(s/p.LateralSlip); math.Abs(fy-want) > 1e-12 || fx != 0 {
			t.Errorf("slip %g across: force (%g, %g), want (0, %g)", s, fx, fy, want)
		}
	}
	if fx, fy := p.ContactForce(n, 0, 0); fx != 0 || fy != 0 {
		t.Errorf("no slip: force (%g, %g)", fx, fy)
	}
	for _, s := range [][2]float64{{0.3, 0.3}, {-0.5, 0.1}, {0.01, -0.2}, {1e-4, 1e-4}} {
		fx, fy := p.ContactForce(n, s[0], s[1])
		cone := math.Hypot(fx/p.Friction, fy/p.LateralFriction) / n
		if cone > 1+1e-12 || fx*s[0]+fy*s[1] <= 0 {
			t.Errorf("slip %v: force (%g, %g) at %.4f of the friction ellipse, power %g", s, fx, fy, cone, fx*s[0]+fy*s[1])
		}
		if math.Hypot(s[0], s[1]) > 0.1 && cone < 0.999 {
			t.Errorf("slip %v: sliding, but the force is at %.4f of the friction ellipse", s, cone)
		}
	}
}

// The tracks spinning in place turn at the rate where the scrubbing
// of its points balances their traction: for hard Coulomb friction at the
// ContactPoints points that rate solves
//
//	Σ_i [B/2·μ²·(v_t − ψ'·B/2) − μ_lat²·ψ'·x_i²] / |(μ·(v_t − ψ'·B/2), μ_lat·ψ'·x_i)| = 0
//
// (found here by bisection), whatever the track speed v_t.
func TestContactPatchSpin(t *testing.T) {
	p := Default()
	tr := New(p)
	drive(tr, 3, -0.4, 0.4)
	_, _, r := tr.Velocity()
	vt := (tr.TrackSpeed(Right) - tr.TrackSpeed(Left)) / 2
	b := p.Gauge / 2
	moment := func(psi float64) float64 {
		var m float64
		for i := 0; i < ContactPoints; i++ {
			x := -p.ContactLength/2 + (float64(i)+0.5)*p.ContactLength/ContactPoints
			sx, sy := vt-psi*b, psi*x
			e := math.Hypot(p.Friction*sx, p.LateralFriction*sy)
			m += (b*p.Friction*p.Friction*sx - p.LateralFriction*p.LateralFriction*sy*x) / e
		}
		return m
	}
	lo, hi := 0.0, vt/b
	for k := 0; k < 60; k++ {
		if mid := (lo + hi) / 2; moment(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	if !near(r, lo, 0.02) {
		t.Errorf("spin at %.4f rad/s, a Coulomb patch turns at %.4f (ideal drive %.4f)", r, lo, vt/b)
	}
	t.Logf("spin: %.4f rad/s, Coulomb patch %.4f, ideal drive %.4f", r, lo, vt/b)
}

// BenchmarkStepSpin turns in place at about 2 rad/s, where most of the
// contact points slide sideways.
func BenchmarkStepSpin(b *testing.B) {
	tr := New(Default())
	drive(tr, 1, -0.4, 0.4)
	for i := 0; i < b.N; i++ {
		tr.Step(dt)
	}
}
