package tracks

import "math"

// The tracked base's friction laws, which the model integrates and which
// the MuJoCo oracle applies to its rigid bodies as forces, so both sides
// use one set of laws. mg is the base's weight, N.

// Traction returns the force (N, forward) of one track whose surface slips
// at slip (m/s: track speed minus ground speed under it) against the
// ground: μ·(m·g/2)·tanh(slip/s₀).
func (p Params) Traction(slip float64) float64 {
	return p.Friction * p.Mass * StandardGravity / 2 * math.Tanh(slip/p.SlipVelocity)
}

// Rolling returns the rolling resistance (N, against the forward speed v).
func (p Params) Rolling(v float64) float64 {
	return p.RollingResistance * p.Mass * StandardGravity * math.Tanh(v/0.01)
}

// Lateral returns the ground's force across the tracks (N, against the
// sideways speed vy).
func (p Params) Lateral(vy float64) float64 {
	return p.LateralFriction * p.Mass * StandardGravity * math.Tanh(vy/p.LateralSlip)
}

// TurnResistance returns the moment (N·m, against the yaw rate) that
// scrubbing tracks of ContactLength put up while turning.
func (p Params) TurnResistance(yawRate float64) float64 {
	return p.LateralFriction * p.Mass * StandardGravity * p.ContactLength / 4 *
		math.Tanh(yawRate*p.ContactLength/2/p.LateralSlip)
}

// EffectiveInertia returns the motor rotor's and the track's inertia seen
// at the motor shaft, kg·m².
func (p Params) EffectiveInertia() float64 {
	return p.Motor.J + p.TrackInertia/(p.GearRatio*p.GearRatio)
}
