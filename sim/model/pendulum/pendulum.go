package pendulum

import (
	"math"

	"github.com/saint-os/saint/sim/model/ode"
)

// StandardGravity is g₀, m/s².
const StandardGravity = 9.80665

// Params describe a pendulum.
type Params struct {
	Length  float64 // L, m
	Mass    float64 // m, kg
	Gravity float64 // g, m/s²; 0 means StandardGravity
	Damping float64 // c, N·m·s/rad at the pivot; 0 is undamped
}

// Default is a 1 m, 1 kg undamped pendulum (period ≈ 2.006 s).
func Default() Params { return Params{Length: 1, Mass: 1, Gravity: StandardGravity} }

// Pendulum is a simple pendulum model; Angle 0 hangs straight down.
type Pendulum struct {
	p     Params
	x     [2]float64 // θ, θ'
	tau   float64    // external torque at the pivot, N·m
	rk    ode.RK4
	deriv ode.Deriv
}

// New returns a pendulum at rest hanging down. Non-positive length or mass
// take the defaults.
func New(p Params) *Pendulum {
	d := Default()
	if !(p.Length > 0) || math.IsInf(p.Length, 0) {
		p.Length = d.Length
	}
	if !(p.Mass > 0) || math.IsInf(p.Mass, 0) {
		p.Mass = d.Mass
	}
	if !(p.Gravity > 0) || math.IsInf(p.Gravity, 0) {
		p.Gravity = d.Gravity
	}
	if !(p.Damping >= 0) || math.IsInf(p.Damping, 0) {
		p.Damping = 0
	}
	pd := &Pendulum{p: p}
	pd.deriv = pd.derivative
	return pd
}

// Name implements world.Model.
func (pd *Pendulum) Name() string { return "pendulum" }

// Set places the pendulum at angle theta (rad) with rate omega (rad/s);
// non-finite values are ignored.
func (pd *Pendulum) Set(theta, omega float64) {
	if ode.Finite(theta, omega) {
		pd.x = [2]float64{theta, omega}
	}
}

// SetTorque applies an external torque at the pivot (N·m) until changed.
func (pd *Pendulum) SetTorque(tau float64) {
	if ode.Finite(tau) {
		pd.tau = tau
	}
}

// Angle returns θ (rad) and Rate θ' (rad/s).
func (pd *Pendulum) Angle() float64 { return pd.x[0] }

// Rate returns θ' (rad/s).
func (pd *Pendulum) Rate() float64 { return pd.x[1] }

// Energy returns kinetic plus potential energy (J), zero at rest hanging.
func (pd *Pendulum) Energy() float64 {
	ml2 := pd.p.Mass * pd.p.Length * pd.p.Length
	return 0.5*ml2*pd.x[1]*pd.x[1] + pd.p.Mass*pd.p.Gravity*pd.p.Length*(1-math.Cos(pd.x[0]))
}

// SmallAnglePeriod returns 2π·√(L/g), s.
func (pd *Pendulum) SmallAnglePeriod() float64 {
	return 2 * math.Pi * math.Sqrt(pd.p.Length/pd.p.Gravity)
}

func (pd *Pendulum) derivative(_ float64, x, d []float64) {
	ml2 := pd.p.Mass * pd.p.Length * pd.p.Length
	d[0] = x[1]
	d[1] = -pd.p.Gravity/pd.p.Length*math.Sin(x[0]) + (pd.tau-pd.p.Damping*x[1])/ml2
}

// Step implements world.Model: advance by dt seconds.
func (pd *Pendulum) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	pd.rk.Step(pd.deriv, 0, pd.x[:], dt)
}

// AppendState implements world.Stater.
func (pd *Pendulum) AppendState(dst []float64) []float64 { return append(dst, pd.x[0], pd.x[1]) }

// Truth implements world.Truther.
func (pd *Pendulum) Truth() any {
	return struct {
		Angle  float64 `json:"angle"`
		Rate   float64 `json:"rate"`
		Energy float64 `json:"energy"`
	}{pd.x[0], pd.x[1], pd.Energy()}
}
