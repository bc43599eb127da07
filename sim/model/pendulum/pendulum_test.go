package pendulum

import (
	"math"
	"testing"
)

const dt = 1e-3 // the world's default step

// An undamped pendulum released at 1 rad keeps its energy within 0.1 %
// over 60 s of 1 ms steps.
func TestEnergyDrift(t *testing.T) {
	p := New(Default())
	p.Set(1, 0)
	e0 := p.Energy()
	worst := 0.0
	for i := 0; i < 60000; i++ {
		p.Step(dt)
		worst = math.Max(worst, math.Abs(p.Energy()-e0)/e0)
	}
	if worst >= 1e-3 {
		t.Errorf("relative energy drift %.3g over 60 s, want < 0.1 %%", worst)
	}
	t.Logf("worst relative energy error over 60 s: %.3g", worst)
}

// At 0.01 rad the period matches 2π√(L/g) within 0.1 % (the large-angle
// correction θ₀²/16 is 6·10⁻⁶). The period is measured between upward zero
// crossings, interpolated within a step, averaged over 10 periods.
func TestSmallAnglePeriod(t *testing.T) {
	for _, length := range []float64{0.25, 1, 4} {
		p := New(Params{Length: length, Mass: 0.5})
		p.Set(0.01, 0)
		var crossings []float64
		prev := p.Angle()
		for i := 1; len(crossings) < 11 && i < 1e6; i++ {
			p.Step(dt)
			if prev < 0 && p.Angle() >= 0 {
				frac := -prev / (p.Angle() - prev)
				crossings = append(crossings, (float64(i-1)+frac)*dt)
			}
			prev = p.Angle()
		}
		if len(crossings) < 11 {
			t.Fatalf("L=%g: only %d zero crossings", length, len(crossings))
		}
		period := (crossings[10] - crossings[0]) / 10
		want := p.SmallAnglePeriod()
		if rel := math.Abs(period-want) / want; rel >= 1e-3 {
			t.Errorf("L=%g: period %.6f s, want %.6f s (error %.3g, limit 0.1 %%)", length, period, want, rel)
		}
	}
}

// Damping removes energy; a torque holds the pendulum off vertical at
// sin θ = τ/(m·g·L).
func TestDampingAndTorque(t *testing.T) {
	p := New(Params{Length: 1, Mass: 1, Damping: 0.5})
	p.Set(0.5, 0)
	p.SetTorque(0.2 * StandardGravity)
	for i := 0; i < 60000; i++ {
		p.Step(dt)
	}
	if want := math.Asin(0.2); math.Abs(p.Angle()-want) > 1e-6 {
		t.Errorf("held at %.6f rad, want %.6f", p.Angle(), want)
	}
}

func TestBadInput(t *testing.T) {
	p := New(Params{Length: math.NaN(), Mass: -1, Damping: math.Inf(1)})
	p.Set(math.NaN(), 1)
	p.SetTorque(math.Inf(1))
	p.Step(-1)
	p.Step(math.NaN())
	p.Step(dt)
	if !(p.Energy() == 0) {
		t.Errorf("energy %g after bad inputs, want 0 (still at rest)", p.Energy())
	}
}
