package tracks

import "math"

// ContactPoints is how many points along each track carry its share of the
// base's weight: the midpoints of equal segments of ContactLength, so their
// mean distance from the middle is l/4, as for pressure spread evenly over
// the track (the rate of turning in place then comes out within 1.2 % of a
// continuous track's, 2.23 against 2.26 rad/s at 0.49 m/s for Default).
// Tracks.MJCF gives the MuJoCo base one roller at each of them.
const ContactPoints = 4

// contactLaw is the ground's friction law with its constants worked out
// once.
type contactLaw struct {
	mu2, muLat2     float64 // μ², μ_lat²
	invSlip, invLat float64 // 1/s₀, 1/s_lat
}

func (p Params) contactLaw() contactLaw {
	return contactLaw{mu2: p.Friction * p.Friction, muLat2: p.LateralFriction * p.LateralFriction, invSlip: 1 / p.SlipVelocity, invLat: 1 / p.LateralSlip}
}

// force is ContactForce with the law's constants.
func (c *contactLaw) force(n, sx, sy float64) (fx, fy float64) {
	ex, ey := c.mu2*sx, c.muLat2*sy
	e := math.Sqrt(ex*sx + ey*sy)
	if e == 0 {
		return 0, 0
	}
	qx, qy := sx*c.invSlip, sy*c.invLat
	q2 := qx*qx + qy*qy
	// Beyond 20 the tanh is 1 to the last bit: points sliding sideways
	// in a turn skip the exponential.
	th := 1.0
	if q2 < 400 {
		th = math.Tanh(math.Sqrt(q2))
	}
	g := n * th / e
	return g * ex, g * ey
}

// ContactForce returns the force (N) that the floor exerts on one contact
// point of a track carrying the normal load n (N) whose surface slips over
// the floor at sx along the track (m/s, forward: the track's surface speed
// minus the ground's under it) and sy across it (m/s, to the left):
// anisotropic Coulomb friction of an elliptic cone,
// fx²/μ² + fy²/μ_lat² ≤ n², pointing where sliding dissipates most
// (fx : fy = μ²·sx : μ_lat²·sy), regularised to n·tanh(|(sx/s₀, sy/s_lat)|)
// on the ellipse. Slipping only along the track it is μ·n·tanh(sx/s₀),
// only across it μ_lat·n·tanh(sy/s_lat); slipping both ways at once the
// two share one cone, which is what makes a skid-steer turn scrub.
func (p Params) ContactForce(n, sx, sy float64) (fx, fy float64) {
	c := p.contactLaw()
	return c.force(n, sx, sy)
}

// Rolling returns the rolling resistance (N, against the forward speed v).
func (p Params) Rolling(v float64) float64 {
	return p.RollingResistance * p.Mass * StandardGravity * math.Tanh(v/0.01)
}

// EffectiveInertia returns the motor rotor's and the track's inertia seen
// at the motor shaft, kg·m².
func (p Params) EffectiveInertia() float64 {
	return p.Motor.J + p.TrackInertia/(p.GearRatio*p.GearRatio)
}
