package dcmotor

import (
	"math"

	"github.com/saint-os/saint/sim/model/ode"
)

// Params describe a DC motor; see the package doc.
type Params struct {
	R  float64 // Ω
	L  float64 // H; 0 means no inductance (first-order motor)
	Ke float64 // V·s/rad
	Kt float64 // N·m/A
	J  float64 // kg·m²
	B  float64 // N·m·s/rad
}

// Gearmotor24V is the tracks' motor, described in the package doc.
func Gearmotor24V() Params {
	return Params{R: 0.6, L: 0.6e-3, Ke: 0.05, Kt: 0.05, J: 5e-5, B: 1e-5}
}

// Valid reports whether the parameters describe a motor: R, Ke, Kt, J
// positive, L and B non-negative, all finite.
func (p Params) Valid() bool {
	return ode.Finite(p.R, p.L, p.Ke, p.Kt, p.J, p.B) && p.R > 0 && p.Ke > 0 && p.Kt > 0 && p.J > 0 && p.L >= 0 && p.B >= 0
}

// Derivative returns di/dt and dω/dt for current i (A), speed ω (rad/s),
// terminal voltage v (V) and load torque (N·m). With L = 0 di/dt is 0 and
// the caller uses QuasiStaticCurrent.
func (p Params) Derivative(i, w, v, load float64) (di, dw float64) {
	if p.L > 0 {
		di = (v - p.R*i - p.Ke*w) / p.L
	} else {
		i = p.QuasiStaticCurrent(w, v)
	}
	dw = (p.Kt*i - p.B*w - load) / p.J
	return di, dw
}

// QuasiStaticCurrent is the current of an inductance-free motor, A.
func (p Params) QuasiStaticCurrent(w, v float64) float64 { return (v - p.Ke*w) / p.R }

// MaxSubstep is the longest integration substep that resolves the
// electrical time constant: L/(4R), or 1 ms without inductance.
func (p Params) MaxSubstep() float64 {
	if p.L > 0 {
		return p.L / p.R / 4
	}
	return 1e-3
}

// Motor is a DC motor with its load.
type Motor struct {
	p      Params
	x      [3]float64 // i, ω, θ
	v      float64
	load   float64
	coast  bool
	dead   bool
	rk     ode.RK4
	deriv  ode.Deriv
	energy float64 // J drawn from the supply
}

// New returns a motor at rest. Invalid parameters take Gearmotor24V's.
func New(p Params) *Motor {
	if !p.Valid() {
		p = Gearmotor24V()
	}
	m := &Motor{p: p}
	m.deriv = m.derivative
	return m
}

// Name implements world.Model.
func (m *Motor) Name() string { return "dcmotor" }

// Params returns the motor's parameters.
func (m *Motor) Params() Params { return m.p }

// SetVoltage sets the terminal voltage (V); non-finite values are ignored.
func (m *Motor) SetVoltage(v float64) {
	if ode.Finite(v) {
		m.v = v
	}
}

// SetLoad sets the load torque opposing positive rotation (N·m).
func (m *Motor) SetLoad(tau float64) {
	if ode.Finite(tau) {
		m.load = tau
	}
}

// SetCoast opens (true) or closes the circuit.
func (m *Motor) SetCoast(coast bool) { m.coast = coast }

// SetDead kills the motor: open circuit whatever the driver does.
func (m *Motor) SetDead(dead bool) { m.dead = dead }

// Current returns the armature current, A.
func (m *Motor) Current() float64 {
	if m.p.L == 0 && !m.open() {
		return m.p.QuasiStaticCurrent(m.x[1], m.v)
	}
	return m.x[0]
}

// Speed returns the shaft speed, rad/s.
func (m *Motor) Speed() float64 { return m.x[1] }

// Angle returns the shaft angle, rad.
func (m *Motor) Angle() float64 { return m.x[2] }

// Energy returns the electrical energy drawn so far, J.
func (m *Motor) Energy() float64 { return m.energy }

func (m *Motor) open() bool { return m.coast || m.dead }

func (m *Motor) derivative(_ float64, x, d []float64) {
	if m.open() {
		d[0] = 0
		d[1] = (-m.p.B*x[1] - m.load) / m.p.J
	} else {
		d[0], d[1] = m.p.Derivative(x[0], x[1], m.v, m.load)
	}
	d[2] = x[1]
}

// Step implements world.Model.
func (m *Motor) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	if m.open() {
		m.x[0] = 0
	}
	n := ode.Substeps(dt, m.p.MaxSubstep())
	h := dt / float64(n)
	for k := 0; k < n; k++ {
		m.rk.Step(m.deriv, 0, m.x[:], h)
		m.energy += m.v * m.Current() * h
	}
}

// AppendState implements world.Stater.
func (m *Motor) AppendState(dst []float64) []float64 { return append(dst, m.x[:]...) }
