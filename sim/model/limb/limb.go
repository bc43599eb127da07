package limb

import (
	"errors"
	"fmt"
	"math"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/rigid"
)

// StandardGravity is g, m/s².
const StandardGravity = 9.80665

// maxSubstep bounds the integration substep, s.
const maxSubstep = 1e-3

// coulombSpeed is the speed (rad/s) over which Coulomb friction builds up.
const coulombSpeed = 0.01

// A limb whose every joint is slower than restRate (rad/s) and within
// poseTolerance (rad) of the pose its dynamics were last computed for
// reuses them (rigid.Chain.UpdateNear), as a holding arm does: a limb
// hanging still or held by its actuators costs a triangular solve a step.
// The Coriolis terms it then neglects are about 10⁻⁷ N·m.
const (
	restRate      = 1e-3
	poseTolerance = 1e-5
)

// Joint is one joint of a limb: its hinge and the body it moves, its hard
// stops, its friction and its actuator.
type Joint struct {
	Name string
	Body rigid.Joint
	// Lower and Upper are the hard stops, rad.
	Lower, Upper float64
	// Damping is viscous friction, N·m·s/rad; Coulomb the dry friction,
	// N·m.
	Damping, Coulomb float64
	// Actuator is the MIT-mode actuator model (hal/device/mitmotor's name).
	Actuator string
	// Mount is +1 when the actuator turns the joint's way, −1 when it is
	// mounted reversed; ZeroAt is the joint angle (rad) at which its
	// encoder reads 0: the actuator reads Mount·(q − ZeroAt).
	Mount, ZeroAt float64
}

// Params describe a limb.
type Params struct {
	// Name identifies the limb in the world ("limb_leg_left").
	Name string
	// Base is the mount on the fixed torso, world frame, m.
	Base   geom.Vec3
	Joints []Joint
}

// Limb is a simulated limb. It is not safe for concurrent use: the world
// steps it on the executor.
type Limb struct {
	p     Params
	chain *rigid.Chain
	q, qd []float64
	// tau is each joint's actuator torque, joint frame, N·m.
	tau       []float64
	net, qdd  []float64
	q1, qd1   []float64
	k1q, k1qd []float64
	dead      []bool
	// stuck: static friction holds the limb (holds); it is not integrated.
	stuck bool
}

// New returns the limb of p at rest with every joint at 0 (within its
// stops).
func New(p Params) (*Limb, error) {
	n := len(p.Joints)
	if n == 0 {
		return nil, errors.New("limb: Params.Joints: none")
	}
	bodies := make([]rigid.Joint, n)
	for i, j := range p.Joints {
		if !(j.Lower <= 0 && 0 <= j.Upper) {
			return nil, fmt.Errorf("limb: %s joint %s: stops [%v, %v] do not hold 0", p.Name, j.Name, j.Lower, j.Upper)
		}
		if j.Mount != 1 && j.Mount != -1 {
			return nil, fmt.Errorf("limb: %s joint %s: mount %v, want 1 or -1", p.Name, j.Name, j.Mount)
		}
		bodies[i] = j.Body
	}
	mk := func() []float64 { return make([]float64, n) }
	return &Limb{p: p, chain: rigid.New(p.Base, geom.Vec3{0, 0, -StandardGravity}, bodies),
		q: mk(), qd: mk(), tau: mk(), net: mk(), qdd: mk(), q1: mk(), qd1: mk(), k1q: mk(), k1qd: mk(), dead: make([]bool, n)}, nil
}

// Name implements world.Model.
func (l *Limb) Name() string { return l.p.Name }

// Params returns the limb's description.
func (l *Limb) Params() Params { return l.p }

// Len returns the number of joints.
func (l *Limb) Len() int { return len(l.q) }

// Angle and Rate return joint i's angle (rad) and rate (rad/s).
func (l *Limb) Angle(i int) float64 { return l.q[i] }

// Rate returns joint i's rate, rad/s.
func (l *Limb) Rate(i int) float64 { return l.qd[i] }

// Positions returns every joint's angle, rad.
func (l *Limb) Positions() []float64 { return append([]float64(nil), l.q...) }

// SetPositions places the joints (rad, clamped to the stops) at rest.
func (l *Limb) SetPositions(q []float64) {
	for i := range l.q {
		if i < len(q) {
			l.q[i] = math.Max(l.p.Joints[i].Lower, math.Min(l.p.Joints[i].Upper, q[i]))
		}
		l.qd[i] = 0
	}
	l.stuck = false
}

// MotorState returns what joint i's actuator measures: its angle and rate
// in its own frame (Mount and ZeroAt applied).
func (l *Limb) MotorState(i int) (angle, rate float64) {
	j := l.p.Joints[i]
	return j.Mount * (l.q[i] - j.ZeroAt), j.Mount * l.qd[i]
}

// SetMotorTorque sets the torque joint i's actuator applies, in its own
// frame, N·m.
func (l *Limb) SetMotorTorque(i int, tau float64) { l.tau[i] = l.p.Joints[i].Mount * tau }

// Torque returns the torque joint i's actuator applies, joint frame, N·m.
func (l *Limb) Torque(i int) float64 { return l.tau[i] }

// SetDead makes joint i's actuator apply nothing (a broken motor).
func (l *Limb) SetDead(i int, dead bool) { l.dead[i] = dead }

// GravityTorques returns the torque each joint needs to hold the limb
// still against gravity at its present angles, N·m: g(q).
func (l *Limb) GravityTorques() []float64 {
	zero := make([]float64, len(l.q))
	l.chain.Update(l.q, zero)
	return append([]float64(nil), l.chain.Bias()...)
}

// Step implements world.Model: it advances the limb by dt under the
// actuators' torques.
func (l *Limb) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	n := int(math.Ceil(dt/maxSubstep - 1e-9))
	h := dt / float64(n)
	for range n {
		l.substep(h)
	}
}

// accel computes q̈ at (q, qd) into l.qdd.
func (l *Limb) accel(q, qd []float64) {
	l.chain.UpdateNear(q, qd, poseTolerance, restRate)
	for i, j := range l.p.Joints {
		tau := l.tau[i]
		if l.dead[i] {
			tau = 0
		}
		l.net[i] = tau - j.Damping*qd[i] - j.Coulomb*math.Tanh(qd[i]/coulombSpeed)
	}
	copy(l.qdd, l.net)
	if err := l.chain.Accelerations(l.net, l.qdd); err != nil {
		clear(l.qdd) // massless chain: a configuration error, nothing moves
	}
}

// substep is one explicit midpoint step of h seconds, then the stops and
// static friction.
func (l *Limb) substep(h float64) {
	if l.stuck {
		// Still held? The dynamics of the pose it rests in stand.
		l.chain.UpdateNear(l.q, l.qd, poseTolerance, restRate)
		if l.holds() {
			return
		}
		l.stuck = false
	}
	l.accel(l.q, l.qd)
	for i := range l.q {
		l.q1[i] = l.q[i] + h/2*l.qd[i]
		l.qd1[i] = l.qd[i] + h/2*l.qdd[i]
	}
	l.accel(l.q1, l.qd1)
	for i := range l.q {
		l.q[i] += h * l.qd1[i]
		l.qd[i] += h * l.qdd[i]
	}
	for i, j := range l.p.Joints {
		switch {
		case l.q[i] < j.Lower:
			l.q[i] = j.Lower
			if l.qd[i] < 0 {
				l.stop(i)
			}
		case l.q[i] > j.Upper:
			l.q[i] = j.Upper
			if l.qd[i] > 0 {
				l.stop(i)
			}
		}
	}
	if l.holds() {
		clear(l.qd)
		l.stuck = true
	}
}

// holds reports whether static friction holds the limb (Karnopp's model, as the arms have it,
// arm.StickRate): when every joint is slower than coulombSpeed and the
// torque driving each — its actuator's less what gravity and the motion
// take (the bias of the last evaluation, at most half a substep ago) — is
// within its Coulomb friction, or pushes it into the stop it rests on,
// the limb is held still: its rates are zeroed and it is not integrated
// until a joint's drive overcomes its friction. Without it the smooth
// friction law, which has no friction at rest, lets an unpowered limb creep
// for ever (an ankle at 2·10⁻³ rad/s after 20 s).
func (l *Limb) holds() bool {
	for i := range l.qd {
		if !(math.Abs(l.qd[i]) <= coulombSpeed) {
			return false
		}
	}
	bias := l.chain.Bias()
	for i, j := range l.p.Joints {
		tau := l.tau[i]
		if l.dead[i] {
			tau = 0
		}
		drive := tau - bias[i]
		switch {
		case math.Abs(drive) <= j.Coulomb:
		case l.q[i] <= j.Lower && drive < 0, l.q[i] >= j.Upper && drive > 0:
		default:
			return false
		}
	}
	return true
}

// stop ends joint i's motion at its hard stop. A joint resting against its
// stop (a straight knee hanging) arrives at less than restRate each step:
// its impulse would change the other joints' rates by less than that, so
// it is only stopped, without recomputing the chain's dynamics.
func (l *Limb) stop(i int) {
	if math.Abs(l.qd[i]) <= restRate {
		l.qd[i] = 0
		return
	}
	_ = l.chain.Stop(i, l.q, l.qd)
}

// AppendState implements world.Stater: angles and rates.
func (l *Limb) AppendState(dst []float64) []float64 {
	dst = append(dst, l.q...)
	return append(dst, l.qd...)
}

// Truth implements world.Truther: the joints by name, angles, rates and
// the actuators' torques (URDF frame).
func (l *Limb) Truth() any {
	js := msg.JointStates{Header: msg.Header{FrameID: l.p.Name}}
	for _, j := range l.p.Joints {
		js.Name = append(js.Name, j.Name)
	}
	js.Position = append(js.Position, l.q...)
	js.Velocity = append(js.Velocity, l.qd...)
	js.Effort = append(js.Effort, l.tau...)
	return js
}
