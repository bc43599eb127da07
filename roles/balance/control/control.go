package control

import "math"

// AccelPitch is the pitch (rad, forward positive) gravity alone gives:
// leaning forward by θ, the specific force in the body frame is
// (−g·sin θ, 0, g·cos θ).
func AccelPitch(accel [3]float64) float64 { return math.Atan2(-accel[0], accel[2]) }

// Complementary fuses the gyroscope's pitch rate (fast, drifting) with the
// accelerometer's pitch (slow, disturbed by acceleration): above 1/(2π·Tau)
// Hz the estimate follows the gyroscope, below it the accelerometer.
type Complementary struct {
	// Tau is the crossover time constant, s.
	Tau   float64
	pitch float64
	ready bool
}

// Update takes one sample (accel m/s², gyro rad/s, body frame; gyro[1] is
// the pitch rate) dt seconds after the previous one and returns the pitch,
// rad. The first sample initialises the estimate from the accelerometer.
func (c *Complementary) Update(accel, gyro [3]float64, dt float64) float64 {
	acc := AccelPitch(accel)
	if !c.ready {
		c.pitch, c.ready = acc, true
		return c.pitch
	}
	alpha := c.Tau / (c.Tau + dt)
	c.pitch = alpha*(c.pitch+gyro[1]*dt) + (1-alpha)*acc
	return c.pitch
}

// Pitch returns the latest estimate, rad.
func (c *Complementary) Pitch() float64 { return c.pitch }

// Gains are a PID controller's gains.
type Gains struct{ Kp, Ki, Kd float64 }

// Valid reports whether the gains are finite and not negative.
func (g Gains) Valid() bool {
	for _, v := range []float64{g.Kp, g.Ki, g.Kd} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return true
}

// PID is a PID controller whose derivative is measured (a gyroscope's
// rate) rather than differentiated from the error, so set-point steps do
// not kick the output. The integral is clamped (anti-windup).
type PID struct {
	Gains
	// IntegralLimit bounds Ki·∫error, in output units; 0 means no integral.
	IntegralLimit float64
	integral      float64
	out           float64
}

// Update returns Kp·err + Ki·∫err + Kd·rate, where rate is the error's
// derivative.
func (p *PID) Update(err, rate, dt float64) float64 {
	if p.Ki > 0 && p.IntegralLimit > 0 {
		p.integral = clamp(p.integral+p.Ki*err*dt, -p.IntegralLimit, p.IntegralLimit)
	} else {
		p.integral = 0
	}
	p.out = p.Kp*err + p.integral + p.Kd*rate
	return p.out
}

// Output returns the last output.
func (p *PID) Output() float64 { return p.out }

// Integral returns the integral term, in output units.
func (p *PID) Integral() float64 { return p.integral }

// Reset clears the integral and the output.
func (p *PID) Reset() { p.integral, p.out = 0, 0 }

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// Params configure a Balancer.
type Params struct {
	// Pitch: A per degree of pitch error, A per degree·s, A per °/s.
	Pitch Gains
	// PitchIntegralLimit bounds the pitch integral, A.
	PitchIntegralLimit float64
	// SpeedKp is the lean (degrees) asked per m/s of speed error; SpeedKi
	// per m of accumulated error.
	SpeedKp, SpeedKi float64
	// MaxLean bounds the lean the speed loop may ask for, degrees.
	MaxLean float64
	// YawKp is the current difference (A) per rad/s of yaw-rate error.
	YawKp float64
	// MaxCurrent bounds each wheel's current, A.
	MaxCurrent float64
}

// Inputs are one loop iteration's measurements and set-points.
type Inputs struct {
	Pitch     float64 // rad
	PitchRate float64 // rad/s
	YawRate   float64 // rad/s
	Speed     float64 // m/s, measured
	Dt        float64 // s

	TargetSpeed   float64 // m/s
	TargetYawRate float64 // rad/s
}

// Outputs are the wheel currents and the terms that made them.
type Outputs struct {
	Left, Right float64 // A
	PIDOut      float64 // A, the pitch loop's output
	Lean        float64 // rad, the lean the speed loop asked for
}

// Balancer is the balance cascade.
type Balancer struct {
	P        Params
	pitch    PID
	speedInt float64
}

// NewBalancer returns a balancer with p.
func NewBalancer(p Params) *Balancer {
	b := &Balancer{}
	b.SetParams(p)
	return b
}

// SetParams changes the parameters, keeping the loops' state.
func (b *Balancer) SetParams(p Params) {
	b.P = p
	b.pitch.Gains, b.pitch.IntegralLimit = p.Pitch, p.PitchIntegralLimit
}

// SetPitchGains changes the pitch PID's gains (A per degree).
func (b *Balancer) SetPitchGains(g Gains) {
	b.P.Pitch = g
	b.pitch.Gains = g
}

// Reset clears the loops' integrals, for a fresh start after arming.
func (b *Balancer) Reset() {
	b.pitch.Reset()
	b.speedInt = 0
}

// Step runs one iteration.
func (b *Balancer) Step(in Inputs) Outputs {
	const deg = 180 / math.Pi
	verr := in.TargetSpeed - in.Speed
	b.speedInt = clamp(b.speedInt+verr*in.Dt, -b.P.MaxLean/math.Max(b.P.SpeedKi, 1e-9), b.P.MaxLean/math.Max(b.P.SpeedKi, 1e-9))
	lean := clamp(b.P.SpeedKp*verr+b.P.SpeedKi*b.speedInt, -b.P.MaxLean, b.P.MaxLean) / deg
	u := b.pitch.Update((in.Pitch-lean)*deg, in.PitchRate*deg, in.Dt)
	u = clamp(u, -b.P.MaxCurrent, b.P.MaxCurrent)
	d := b.P.YawKp * (in.TargetYawRate - in.YawRate)
	return Outputs{
		Left:   clamp(u-d, -b.P.MaxCurrent, b.P.MaxCurrent),
		Right:  clamp(u+d, -b.P.MaxCurrent, b.P.MaxCurrent),
		PIDOut: u,
		Lean:   lean,
	}
}
