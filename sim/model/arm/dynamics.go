package arm

import (
	"math"

	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/ode"
	"github.com/saint-os/saint/sim/model/rigid"
)

// maxSubstep bounds the rigid-body integration substep, s: the Coulomb
// friction's tanh(ω/0.01) is steep (5 N·m·s/rad at rest, a time constant
// of about 1 ms on the wrist), inside the midpoint rule's stability region
// (h·λ < 2) at 1 ms. The oracle measures 3.8·10⁻⁴ rad RMS at worst with the
// midpoint rule and 3.4·10⁻⁴ with RK4, at half RK4's cost; 0.5 ms substeps
// gain nothing measurable.
const maxSubstep = 1e-3

// An arm whose every joint is slower than holdRate (rad/s) and
// accelerates less than holdAccel (rad/s²) is in equilibrium — servos
// holding a pose against gravity, or a limp arm hanging still — and is not
// integrated: over a step it would move by less than 10⁻⁹ rad. (Held, the
// smooth friction law would let it creep by 10⁻¹³ rad/s for ever.) Any
// change of command, load or push accelerates it past holdAccel.
const (
	holdRate  = 1e-6
	holdAccel = 1e-3
)

// restRate is the joint rate (rad/s) below which an arm within
// PoseTolerance of the pose its dynamics were last computed for reuses
// them (rigid.Chain.UpdateNear): the Coriolis terms it then neglects are
// about 10⁻⁷ N·m.
const restRate = 1e-3

// coulombSpeed is the speed (rad/s) over which Coulomb friction builds up.
const coulombSpeed = 0.01

// StickRate is the stiction band (rad/s) of Karnopp's friction model,
// the speed over which the smooth Coulomb law builds up: a geared servo's
// output is held by static friction while the torque on it — its drive
// against its load — is within the Coulomb friction, so an arm whose
// every joint is slower than StickRate and so loaded sticks (its rates
// are zeroed). Without it the smooth law, which has no friction at rest,
// lets a joint whose drive switches on at its deadband's edge (a step of
// a few tenths of a newton-metre) chatter there for ever, ±10⁻³ rad/s over
// 10⁻⁵ rad, and the arm is integrated every step. A model checked against
// another simulator applies the same rule on its side.
const StickRate = coulombSpeed

// dynamics is the arm's five joints as one rigid-body chain (package
// rigid): the mass matrix with each servo's rotor inertia, Coriolis and
// gravity terms, integrated by the explicit midpoint rule (second order,
// two evaluations a step) under the servos' drive and friction.
type dynamics struct {
	chain         *rigid.Chain
	q, qd, tau, a []float64
	x             [2 * NumJoints]float64
	arm           *Arm

	hand    rigid.Joint // the hand's own mass properties
	payload float64     // mass (kg) held at the fingers now in the chain's hand
}

// chainJoints describes the arm as a rigid-body chain from its
// parameters: link i a solid cylinder of Links[i].Mass, Length and Radius
// along its body's x axis (the bracket along z).
func chainJoints(p Params) []rigid.Joint {
	rod := func(l Link, along int) (geom.Vec3, geom.Mat3) {
		var com geom.Vec3
		com[along] = l.Length / 2
		perp := cylinderPerp(l)
		in := geom.Mat3{{perp, 0, 0}, {0, perp, 0}, {0, 0, perp}}
		in[along][along] = l.Mass * l.Radius * l.Radius / 2
		return com, in
	}
	axes := [NumJoints]geom.Vec3{{0, 0, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {1, 0, 0}}
	out := make([]rigid.Joint, NumJoints)
	for i := range out {
		along := 0
		if i == ShoulderPan {
			along = 2
		}
		com, in := rod(p.Links[i], along)
		var off geom.Vec3
		switch i {
		case ShoulderPan:
		case ShoulderLift:
			off = geom.Vec3{0, 0, p.Links[ShoulderPan].Length}
		default:
			off = geom.Vec3{p.Links[i-1].Length, 0, 0}
		}
		out[i] = rigid.Joint{Offset: off, Axis: axes[i], Mass: p.Links[i].Mass, COM: com, Inertia: in,
			Armature: p.Joints[i].Servo.RotorInertia}
	}
	return out
}

func (d *dynamics) init(a *Arm) {
	joints := chainJoints(a.p)
	d.arm = a
	d.chain = rigid.New(a.p.Mount, geom.Vec3{0, 0, -StandardGravity}, joints)
	d.hand = joints[WristRoll]
	d.q, d.qd = make([]float64, NumJoints), make([]float64, NumJoints)
	d.tau, d.a = make([]float64, NumJoints), make([]float64, NumJoints)
}

// setPayload puts mass (kg) at the fingers' centre into the hand's body.
func (d *dynamics) setPayload(mass float64) {
	if mass == d.payload {
		return
	}
	d.payload = mass
	h := d.hand
	if mass <= 0 {
		d.chain.SetBody(WristRoll, h.Mass, h.COM, h.Inertia)
		return
	}
	tip := geom.Vec3{d.arm.p.Links[WristRoll].Length, 0, 0}
	total := h.Mass + mass
	com := h.COM.Scale(h.Mass / total).Add(tip.Scale(mass / total))
	// Parallel-axis terms of the hand and the point mass about the new
	// centre of mass.
	in := h.Inertia
	for _, part := range []struct {
		m float64
		r geom.Vec3
	}{{h.Mass, h.COM.Sub(com)}, {mass, tip.Sub(com)}} {
		rr := part.r.Dot(part.r)
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				in[i][j] -= part.m * part.r[i] * part.r[j]
				if i == j {
					in[i][j] += part.m * rr
				}
			}
		}
	}
	d.chain.SetBody(WristRoll, total, com, in)
}

// stepRigid advances the five joints together by dt.
func (a *Arm) stepRigid(dt float64) {
	d := &a.dyn
	payload := 0.0
	if a.objMass > 0 && a.Holding() {
		payload = a.objMass
	}
	d.setPayload(payload)
	for _, s := range a.joints {
		s.MoveSetpoint(dt)
	}
	for i, s := range a.joints {
		d.x[i], d.x[NumJoints+i] = s.Angle(), s.Rate()
	}
	// An arm stuck last step, at rest where the chain's dynamics are
	// cached, sticks again or not whatever holding says: its outcome
	// is the same either way, so sticks goes first and spares holding's
	// evaluation of the chain (a tenth of a simulated robot's CPU).
	if d.restsOnCache() && d.sticks() || d.holding() || d.sticks() {
		for i, s := range a.joints {
			s.Place(d.x[i], d.x[NumJoints+i], s.DriveTorque(d.x[i], d.x[NumJoints+i]))
		}
		return
	}
	n := ode.Substeps(dt, maxSubstep)
	h := dt / float64(n)
	for k := 0; k < n; k++ {
		for i, s := range a.joints {
			d.x[i], d.x[NumJoints+i] = s.Angle(), s.Rate()
		}
		d.midpoint(h)
		d.stops()
		stuck := d.sticks()
		for i, s := range a.joints {
			s.Place(d.x[i], d.x[NumJoints+i], s.DriveTorque(d.x[i], d.x[NumJoints+i]))
		}
		if stuck {
			return
		}
	}
}

// holding reports whether the arm at state d.x is in equilibrium (holdRate,
// holdAccel).
func (d *dynamics) holding() bool {
	for i := 0; i < NumJoints; i++ {
		if !(math.Abs(d.x[NumJoints+i]) <= holdRate) {
			return false
		}
	}
	var dx [2 * NumJoints]float64
	d.derivative(0, d.x[:], dx[:])
	for i := 0; i < NumJoints; i++ {
		if !(math.Abs(dx[NumJoints+i]) <= holdAccel) {
			return false
		}
	}
	return true
}

// restsOnCache reports whether the arm at state d.x is exactly at rest
// where the chain's last evaluation stands (rigid.Chain.Near): then
// holding's evaluation changes nothing in the chain.
func (d *dynamics) restsOnCache() bool {
	for i := 0; i < NumJoints; i++ {
		if d.x[NumJoints+i] != 0 {
			return false
		}
	}
	return d.chain.Near(d.x[:NumJoints], d.x[NumJoints:], PoseTolerance, restRate)
}

// sticks reports whether static friction holds the arm at state d.x
// (StickRate), and then stops it.
func (d *dynamics) sticks() bool {
	for i := 0; i < NumJoints; i++ {
		if !(math.Abs(d.x[NumJoints+i]) <= StickRate) {
			return false
		}
	}
	// The bias of the chain's last evaluation, at most a substep ago
	// (within StickRate·h of this pose): its Coriolis terms and the pose's
	// change are worth about 10⁻⁵ N·m, against Coulomb friction of
	// hundredths.
	gravity := d.chain.Bias()
	for i, s := range d.arm.joints {
		if !(math.Abs(s.DriveTorque(d.x[i], 0)-gravity[i]) <= d.arm.p.Joints[i].Coulomb) {
			return false
		}
	}
	clear(d.x[NumJoints:])
	return true
}

// stops ends every motion into a hard stop by the stop's impulse.
func (d *dynamics) stops() {
	for i, s := range d.arm.joints {
		lo, hi := s.Limits()
		v := d.x[NumJoints+i]
		if d.x[i] <= lo && v < 0 || d.x[i] >= hi && v > 0 {
			d.x[i] = ode.Clamp(d.x[i], lo, hi)
			copy(d.q, d.x[:NumJoints])
			copy(d.qd, d.x[NumJoints:])
			if d.chain.Stop(i, d.q, d.qd) != nil {
				d.qd[i] = 0
			}
			copy(d.x[NumJoints:], d.qd)
		}
	}
}

// derivative is the chain's forward dynamics: x = (angles, rates).
func (d *dynamics) derivative(_ float64, x, dx []float64) {
	for i, s := range d.arm.joints {
		j := &d.arm.p.Joints[i]
		q, w := x[i], x[NumJoints+i]
		d.q[i], d.qd[i] = q, w
		d.tau[i] = s.DriveTorque(q, w) - j.Friction*w - j.Coulomb*math.Tanh(w/coulombSpeed)
	}
	d.chain.UpdateNear(d.q, d.qd, PoseTolerance, restRate)
	if d.chain.Accelerations(d.tau, d.a) != nil {
		clear(d.a)
	}
	for i := 0; i < NumJoints; i++ {
		dx[i], dx[NumJoints+i] = x[NumJoints+i], d.a[i]
	}
}

// cylinderPerp is a solid cylinder's moment of inertia about an axis
// through its centre across it, m·(3r² + L²)/12. (A thin rod's m·L²/12,
// which the arm used before, is no rigid body's for the short, thick
// bracket: its axial moment m·r²/2 would exceed the sum of the other two.)
func cylinderPerp(l Link) float64 {
	return l.Mass * (3*l.Radius*l.Radius + l.Length*l.Length) / 12
}

// midpoint advances d.x by h with the explicit midpoint rule.
func (d *dynamics) midpoint(h float64) {
	var k1, mid, k2 [2 * NumJoints]float64
	d.derivative(0, d.x[:], k1[:])
	for i := range mid {
		mid[i] = d.x[i] + h/2*k1[i]
	}
	d.derivative(0, mid[:], k2[:])
	for i := range d.x {
		d.x[i] += h * k2[i]
	}
}
