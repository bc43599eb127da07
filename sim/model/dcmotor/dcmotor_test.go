package dcmotor

import (
	"math"
	"math/cmplx"
	"testing"
)

const dt = 1e-3

// stepResponse is the analytic response of the second-order motor to a
// voltage step V from rest with no load: x(t) = x∞ + Σ cₖ·vₖ·e^{λₖt} for
// the system x' = A·x + B·V, x = (i, ω).
func stepResponse(p Params, v, t float64) (i, w float64) {
	a11, a12 := -p.R/p.L, -p.Ke/p.L
	a21, a22 := p.Kt/p.J, -p.B/p.J
	// Steady state: A·x∞ = −B·V.
	den := p.R*p.B + p.Kt*p.Ke
	iInf, wInf := v*p.B/den, v*p.Kt/den
	tr, det := a11+a22, a11*a22-a12*a21
	disc := cmplx.Sqrt(complex(tr*tr-4*det, 0))
	l1, l2 := (complex(tr, 0)+disc)/2, (complex(tr, 0)-disc)/2
	// Eigenvectors (a12, λ−a11); solve for c1, c2 from x(0) − x∞ = (−iInf, −wInf).
	v1 := [2]complex128{complex(a12, 0), l1 - complex(a11, 0)}
	v2 := [2]complex128{complex(a12, 0), l2 - complex(a11, 0)}
	d := v1[0]*v2[1] - v1[1]*v2[0]
	r0, r1 := complex(-iInf, 0), complex(-wInf, 0)
	c1 := (r0*v2[1] - r1*v2[0]) / d
	c2 := (v1[0]*r1 - v1[1]*r0) / d
	e1, e2 := cmplx.Exp(l1*complex(t, 0)), cmplx.Exp(l2*complex(t, 0))
	i = iInf + real(c1*v1[0]*e1+c2*v2[0]*e2)
	w = wInf + real(c1*v1[1]*e1+c2*v2[1]*e2)
	return i, w
}

// A 24 V step from rest follows the analytic second-order solution: current
// and speed within 0.1 % of their final values at every step over 0.5 s.
func TestStepResponseSecondOrder(t *testing.T) {
	for _, p := range []Params{
		Gearmotor24V(),
		{R: 2, L: 5e-3, Ke: 0.02, Kt: 0.02, J: 2e-6, B: 1e-6}, // small, underdamped hobby motor
	} {
		m := New(p)
		m.SetVoltage(24)
		_, wInf := stepResponse(p, 24, 100)
		iPeak := 24 / p.R
		worstI, worstW := 0.0, 0.0
		for k := 1; k <= 500; k++ {
			m.Step(dt)
			i, w := stepResponse(p, 24, float64(k)*dt)
			worstI = math.Max(worstI, math.Abs(m.Current()-i)/iPeak)
			worstW = math.Max(worstW, math.Abs(m.Speed()-w)/wInf)
		}
		if worstI > 1e-3 || worstW > 1e-3 {
			t.Errorf("%+v: worst error current %.3g (of %.1f A), speed %.3g (of %.1f rad/s), want < 0.1 %%", p, worstI, iPeak, worstW, wInf)
		}
	}
}

// Without inductance the motor is first order: ω(t) = ω∞·(1 − e^{−t/τ}),
// τ = J·R/(R·b + Kₜ·Kₑ).
func TestStepResponseFirstOrder(t *testing.T) {
	p := Gearmotor24V()
	p.L = 0
	m := New(p)
	m.SetVoltage(12)
	den := p.R*p.B + p.Kt*p.Ke
	wInf, tau := 12*p.Kt/den, p.J*p.R/den
	worst := 0.0
	for k := 1; k <= 200; k++ {
		m.Step(dt)
		want := wInf * (1 - math.Exp(-float64(k)*dt/tau))
		worst = math.Max(worst, math.Abs(m.Speed()-want)/wInf)
	}
	if worst > 1e-4 {
		t.Errorf("first-order step: worst error %.3g of ω∞, want < 0.01 %%", worst)
	}
	if got, want := m.Current(), 12*p.B/den; math.Abs(got-want) > 1e-3 {
		t.Errorf("steady current %.4f A, want %.4f", got, want)
	}
}

// A stalled motor (huge load) draws V/R; a coasting one draws nothing and
// slows down; a dead one ignores its voltage.
func TestStallCoastDead(t *testing.T) {
	p := Gearmotor24V()
	m := New(p)
	m.SetVoltage(24)
	m.SetLoad(100)
	m.Step(0.05)
	// The rotor spins backwards under the load; check current against the
	// circuit equation at the final speed instead of assuming zero speed.
	if want := (24 - p.Ke*m.Speed()) / p.R; math.Abs(m.Current()-want) > 0.01*want {
		t.Errorf("loaded current %.2f A, want %.2f", m.Current(), want)
	}
	m = New(p)
	m.SetVoltage(24)
	for k := 0; k < 300; k++ {
		m.Step(dt)
	}
	w0 := m.Speed()
	m.SetCoast(true)
	m.Step(dt)
	if m.Current() != 0 || m.Speed() >= w0 {
		t.Errorf("coasting: current %g, speed %g (was %g)", m.Current(), m.Speed(), w0)
	}
	d := New(p)
	d.SetDead(true)
	d.SetVoltage(24)
	d.Step(0.1)
	if d.Speed() != 0 || d.Current() != 0 {
		t.Errorf("dead motor moved: %g rad/s, %g A", d.Speed(), d.Current())
	}
}

func TestBadInput(t *testing.T) {
	m := New(Params{R: math.NaN()})
	if m.Params() != Gearmotor24V() {
		t.Error("invalid parameters were kept")
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		m.SetVoltage(v)
		m.SetLoad(v)
		m.Step(v)
		m.Step(-1)
	}
	m.Step(dt)
	if m.Speed() != 0 || m.Current() != 0 {
		t.Errorf("bad inputs moved the motor: %g %g", m.Speed(), m.Current())
	}
}

func BenchmarkStep(b *testing.B) {
	m := New(Gearmotor24V())
	m.SetVoltage(12)
	for i := 0; i < b.N; i++ {
		m.Step(dt)
	}
}
