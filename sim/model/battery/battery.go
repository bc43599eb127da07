package battery

import (
	"math"

	"github.com/saint-os/saint/sim/model/ode"
)

// Params describe a battery pack.
type Params struct {
	FullV, EmptyV float64 // open-circuit voltage at SoC 1 and 0, V
	Resistance    float64 // internal resistance, Ω
	CapacityAh    float64 // A·h
}

// LiFePO4_8S is the tracks' 24 V pack.
func LiFePO4_8S() Params { return Params{FullV: 27.2, EmptyV: 24.0, Resistance: 0.08, CapacityAh: 10} }

// LiPo10S is the balancing base's 36 V pack.
func LiPo10S() Params { return Params{FullV: 42.0, EmptyV: 33.0, Resistance: 0.1, CapacityAh: 8} }

// Battery is a battery pack.
type Battery struct {
	p   Params
	soc float64
	amp float64 // current drawn in the last step, A
}

// New returns a full battery. Invalid parameters take LiFePO4_8S's.
func New(p Params) *Battery {
	if !ode.Finite(p.FullV, p.EmptyV, p.Resistance, p.CapacityAh) || !(p.FullV >= p.EmptyV) || p.EmptyV < 0 || p.Resistance < 0 || !(p.CapacityAh > 0) {
		p = LiFePO4_8S()
	}
	return &Battery{p: p, soc: 1}
}

// Params returns the pack's parameters.
func (b *Battery) Params() Params { return b.p }

// SetSoC sets the state of charge, clamped to 0–1.
func (b *Battery) SetSoC(soc float64) {
	if ode.Finite(soc) {
		b.soc = ode.Clamp(soc, 0, 1)
	}
}

// SoC returns the state of charge, 0–1.
func (b *Battery) SoC() float64 { return b.soc }

// OpenCircuit returns V_oc at the present charge, V.
func (b *Battery) OpenCircuit() float64 { return b.p.EmptyV + (b.p.FullV-b.p.EmptyV)*b.soc }

// Terminal returns the terminal voltage while drawing amps, never below 0.
func (b *Battery) Terminal(amps float64) float64 {
	if !ode.Finite(amps) {
		amps = 0
	}
	return math.Max(0, b.OpenCircuit()-b.p.Resistance*amps)
}

// Current returns the current drawn in the last Draw, A.
func (b *Battery) Current() float64 { return b.amp }

// Voltage returns the terminal voltage at the last Draw's current, V.
func (b *Battery) Voltage() float64 { return b.Terminal(b.amp) }

// Draw takes amps for dt seconds from the pack.
func (b *Battery) Draw(amps, dt float64) {
	if !ode.Finite(amps, dt) || dt < 0 {
		return
	}
	b.amp = amps
	b.soc = ode.Clamp(b.soc-amps*dt/(3600*b.p.CapacityAh), 0, 1)
}
