package balance

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/saint-os/saint/sim/model/geom"
)

// rollingAt starts the base upright at world x0, rolling forward at v
// (m/s) with its wheels gripping.
func rollingAt(b *Balance, x0, v float64) {
	b.x[sPosX], b.x[sV] = x0, v
	b.x[sOmegaL], b.x[sOmegaR] = v/b.p.WheelRadius, v/b.p.WheelRadius
}

// energy is the base's mechanical energy (J) with the floor's height as
// the axle's.
func (b *Balance) energy() float64 {
	p := b.p
	M, l := p.BodyMass, p.COMHeight
	th, thd, v := b.x[sPitch], b.x[sPitchRate], b.x[sV]
	sa, ca, _ := b.ground(b.x[:], math.Cos(b.x[sYaw]))
	h, _, _ := b.FloorHeight(b.x[sPosX])
	cta := math.Cos(th)*ca - math.Sin(th)*sa
	kin := 0.5*(M+2*p.WheelMass)*v*v + 0.5*p.WheelInertia*(b.x[sOmegaL]*b.x[sOmegaL]+b.x[sOmegaR]*b.x[sOmegaR]) +
		M*l*cta*v*thd + 0.5*(p.BodyInertia+M*l*l)*thd*thd
	return kin + (M+2*p.WheelMass)*StandardGravity*h + M*StandardGravity*l*math.Cos(th)
}

// Frictionless, a base rolling over a bump changes its energy by exactly
// the motors' work: the slope's share of gravity, the coupling through
// the lean from the floor's normal and the centripetal swing over the
// curvature are one Lagrangian's. A PD pitch loop keeps it up; a torque
// held over a step does τ·Δφ of work (φ the wheel's angle on the body).
func TestBumpConservesEnergy(t *testing.T) {
	p := Default()
	p.WheelFriction, p.YawFriction = 0, 0
	p.Bumps = []Bump{{At: 0.5, Height: 0.03, Length: 0.4}}
	b := New(p, nil)
	rollingAt(b, 0, 1.5)
	e0 := b.energy()
	kp, kd := 3*p.BodyMass*StandardGravity*p.COMHeight, 40.0
	var work, worst, top float64
	for i := 0; i < 1000; i++ {
		th, thd := b.Pitch()
		tau := (kp*th + kd*thd) / 2
		b.SetWheelTorque(Left, tau)
		b.SetWheelTorque(Right, tau)
		before := [2]float64{b.WheelAngle(Left), b.WheelAngle(Right)}
		b.Step(dt)
		work += tau * (b.WheelAngle(Left) - before[0] + b.WheelAngle(Right) - before[1])
		worst = math.Max(worst, math.Abs(b.energy()-e0-work))
		h, _, _ := b.FloorHeight(b.x[sPosX])
		top = math.Max(top, h)
		if b.Sliding(Left) || b.Sliding(Right) {
			t.Fatalf("a wheel slid at x = %.3f m on μ = 1", b.x[sPosX])
		}
	}
	if b.Fallen() {
		t.Fatal("fell over")
	}
	if worst > 1e-6*e0 {
		t.Errorf("energy less the motors' work drifted by %.3g J of %.4g J", worst, e0)
	}
	if x, _ := b.WorldPosition(); x < 0.75 || top < 0.03-1e-6 {
		t.Errorf("reached x = %.3f m, highest %.4f m: did not cross the bump", x, top)
	}
	// Travel is along the floor: longer than the ground covered by the
	// bump's extra arc length.
	s, _ := b.Position()
	x, _ := b.WorldPosition()
	arc := 0.0
	for k := 0; k < 4000; k++ {
		u := 0.3 + 0.4*(float64(k)+0.5)/4000
		_, dh, _ := b.FloorHeight(u)
		arc += math.Sqrt(1+dh*dh) * 0.4 / 4000
	}
	if extra := s - x; math.Abs(extra-(arc-0.4)) > 1e-6 {
		t.Errorf("travel %.6f m over %.6f m of floor: %.3g m more, the bump's arc adds %.3g m", s, x, extra, arc-0.4)
	}
}

// The IMU sees what an accelerometer riding the body over the bump would:
// its reading equals the specific force from the second difference of its
// own path in the world, rotated into the body.
func TestBumpIMU(t *testing.T) {
	p := Default()
	p.WheelFriction, p.YawFriction = 0, 0
	p.Bumps = []Bump{{At: 0.4, Height: 0.02, Length: 0.3}}
	b := New(p, nil)
	rollingAt(b, 0, 1)
	pos := func() geom.Vec3 {
		h, _, _ := b.FloorHeight(b.x[sPosX])
		s, c := math.Sincos(b.x[sPitch])
		return geom.Vec3{b.x[sPosX] + p.IMUHeight*s, 0, h + p.IMUHeight*c}
	}
	var prev, cur geom.Vec3
	var reading geom.Vec3
	var pitch float64
	var worst, lowest, highest float64
	lowest, highest = math.Inf(1), math.Inf(-1)
	for i := 0; i < 500; i++ {
		prev, cur = cur, pos()
		b.Step(dt)
		next := pos()
		// The raised cosine's curvature jumps at its ends, and so does the
		// acceleration: a second difference across the jump averages it.
		end := math.Abs(math.Abs(cur[0]-p.IMUHeight*math.Sin(pitch)-0.4)-0.15) < 3*dt
		if i >= 1 && !end {
			a := next.Sub(cur.Scale(2)).Add(prev).Scale(1 / (dt * dt))
			want := geom.RotY(pitch).ApplyT(a.Add(geom.Vec3{0, 0, StandardGravity}))
			if d := want.Sub(reading).Norm(); d > worst {
				worst = d
			}
			lowest, highest = math.Min(lowest, reading[2]), math.Max(highest, reading[2])
		}
		reading, _ = b.TrueIMU()
		pitch = b.x[sPitch]
	}
	if worst > 0.05 {
		t.Errorf("IMU differs from its path's second difference by up to %.3g m/s²", worst)
	}
	// Over the crest (curvature −H/2·(2π/L)² ≈ −4.4 /m) at about 1 m/s
	// the IMU feels lighter by κ·v²; entering and leaving, heavier.
	if lowest > StandardGravity-1.5 || highest < StandardGravity+3 {
		t.Errorf("vertical specific force %.2f to %.2f m/s² over the bump, want beyond g − 1.5 and g + 3", lowest, highest)
	}
}

// On a flat floor the bump terms are absent: a base with a bump far away
// moves exactly as one without.
func TestBumpElsewhereChangesNothing(t *testing.T) {
	p := Default()
	flat := New(p, nil)
	p.Bumps = []Bump{{At: 50, Height: 0.02, Length: 0.3}}
	bumpy := New(p, nil)
	for _, b := range []*Balance{flat, bumpy} {
		b.SetPitch(0.05, 0)
		rollingAt(b, 0, 0.3)
		steps(b, 1, func() { b.SetWheelTorque(Left, 2); b.SetWheelTorque(Right, 1.5) })
	}
	if flat.x != bumpy.x {
		t.Errorf("state differs:\n%v\n%v", flat.x, bumpy.x)
	}
}

func TestSetBumpsRefusesBadBumps(t *testing.T) {
	b := New(Default(), nil)
	for _, c := range []struct {
		bumps []Bump
		want  string
	}{
		{[]Bump{{At: math.NaN(), Height: 0.02, Length: 0.3}}, "bumps[0]: at, height and length must be finite"},
		{[]Bump{{At: 1, Height: 0, Length: 0.3}}, "bumps[0].height"},
		{[]Bump{{At: 1, Height: 0.05, Length: 0.2}}, "bumps[0].length: 0.2 m is too short"},
		{[]Bump{{At: 1, Height: 0.02, Length: 0.3}, {At: 1.2, Height: -0.01, Length: 0.3}}, "bumps[1]: overlaps bumps[0]"},
	} {
		err := b.SetBumps(c.bumps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetBumps(%v) = %v, want %q", c.bumps, err, c.want)
		}
	}
	if err := b.SetBumps([]Bump{{At: 1, Height: -0.02, Length: 0.3}}); err != nil {
		t.Errorf("a dip: %v", err)
	}
	if h, _, _ := b.FloorHeight(1); h != -0.02 {
		t.Errorf("floor at the dip's centre %g m, want -0.02", h)
	}
}

// BenchmarkStepOnBump is BenchmarkStep on the flank of a long bump, where
// every evaluation computes the floor's slope and curvature.
func BenchmarkStepOnBump(b *testing.B) {
	p := Default()
	p.Bumps = []Bump{{At: 5, Height: 0.5, Length: 20}}
	m := New(p, rand.New(rand.NewPCG(1, 1)))
	m.SetWheelTorque(Left, 1)
	m.SetWheelTorque(Right, 1.2)
	for i := 0; i < b.N; i++ {
		m.Step(dt)
		m.IMU()
	}
}
