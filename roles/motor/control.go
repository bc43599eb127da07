package motor

import (
	"errors"
	"fmt"
	"math"

	"github.com/saint-os/saint/bus/msg"
)

// Feedback is what one motor reported at its last poll, in the motor's
// frame (before direction and urdf_offset).
type Feedback struct {
	Reachable bool
	Position  float64 // rad from the motor's zero
	Velocity  float64 // rad/s
	Effort    float64 // N·m
}

// Output is what one motor is told for the next control period, in the
// motor's frame.
//
// A position servo (Feetech) takes Position and TorqueLimit. A
// torque-controlled actuator takes Position, Velocity, Kp, Kd and
// FeedForward and runs τ = Kp·(Position − p) + Kd·(Velocity − v) +
// FeedForward itself, between commands.
type Output struct {
	// Torque false releases the motor (no holding torque).
	Torque bool
	// Position is the goal, rad from the motor's zero.
	Position float64
	// TorqueLimit is the fraction (0–1) of the motor's maximum torque it
	// may use (position servos).
	TorqueLimit float64
	// Velocity (rad/s), Kp (N·m/rad), Kd (N·m·s/rad) and FeedForward
	// (N·m) complete a torque-controlled actuator's command.
	Velocity, Kp, Kd, FeedForward float64
}

// motorKind is what a middleware's motors can be told.
type motorKind int

const (
	// positionServos (Feetech STS, hobby servos): POSITION without gains.
	positionServos motorKind = iota
	// torqueActuators (MIT-mode CAN): POSITION, TORQUE and MIXED.
	torqueActuators
	// velocityDrives (wheels behind a speed loop): VELOCITY.
	velocityDrives
)

// setpoint is one joint's share of an accepted command, URDF frame.
type setpoint struct {
	torqueMode bool // computed on the executor (TORQUE, MIXED) rather than sent as a goal
	q, dq, tau float64
	kp, kd     float64
}

// decode checks a ControlCommand against the joint table and returns one
// setpoint per joint (nil for joints the command leaves alone). Positions
// are clamped to [lower, upper]. On position servos only POSITION without
// gains can be honoured, on speed-controlled drives only VELOCITY;
// anything else is refused with the reason.
func decode(j *Joints, c msg.ControlCommand, kind motorKind) ([]*setpoint, error) {
	idx := make([]int, 0, len(j.JointNames))
	if len(c.MotorIDs) == 0 {
		for i := range j.JointNames {
			idx = append(idx, i)
		}
	} else {
		seen := map[int]bool{}
		for k, id := range c.MotorIDs {
			i := j.Index(id)
			if i < 0 {
				return nil, fmt.Errorf("motor_ids[%d]: %d is not a motor of joints.yaml (%v)", k, id, j.MapIndex)
			}
			if seen[id] {
				return nil, fmt.Errorf("motor_ids[%d]: motor %d given twice", k, id)
			}
			seen[id] = true
			idx = append(idx, i)
		}
	}
	n := len(idx)
	check := func(name string, v []float64, required bool) error {
		if len(v) == 0 && !required {
			return nil
		}
		if len(v) != n {
			return fmt.Errorf("%s: %d values, expected %d (one per motor of motor_ids)", name, len(v), n)
		}
		for k, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s[%d]: not a finite number", name, k)
			}
		}
		return nil
	}
	var need map[string]bool
	switch c.Mode {
	case msg.ModePosition, "":
		need = map[string]bool{"positions": true}
	case msg.ModeTorque:
		need = map[string]bool{"torques": true}
	case msg.ModeMixed:
		need = map[string]bool{"positions": true, "torques": true, "kp": true, "kd": true}
	case msg.ModeVelocity:
		need = map[string]bool{"velocities": true}
	default:
		return nil, fmt.Errorf("mode: %q is not POSITION, TORQUE or MIXED", c.Mode)
	}
	switch {
	case kind == velocityDrives && c.Mode != msg.ModeVelocity:
		return nil, fmt.Errorf("mode: %q: these motors are speed-controlled drives (wheels): send VELOCITY with velocities (rad/s)", c.Mode)
	case kind != velocityDrives && c.Mode == msg.ModeVelocity:
		return nil, errors.New(`mode: "VELOCITY" is for speed-controlled drives (wheels); these motors take POSITION, TORQUE or MIXED`)
	}
	for _, f := range []struct {
		name string
		v    []float64
	}{{"positions", c.Positions}, {"velocities", c.Velocities}, {"torques", c.Torques}, {"kp", c.Kp}, {"kd", c.Kd}} {
		if err := check(f.name, f.v, need[f.name]); err != nil {
			return nil, err
		}
	}
	if kind == velocityDrives && (len(c.Positions) > 0 || len(c.Torques) > 0 || len(c.Kp) > 0 || len(c.Kd) > 0) {
		return nil, errors.New("positions, torques, kp, kd: a VELOCITY command carries velocities only; these drives run their own speed loop")
	}
	if kind == positionServos {
		switch {
		case c.Mode == msg.ModeTorque || c.Mode == msg.ModeMixed:
			return nil, fmt.Errorf("mode: %s needs torque-controlled actuators; these motors are position servos (Feetech STS) with no torque mode: send POSITION", c.Mode)
		case len(c.Kp) > 0 || len(c.Kd) > 0:
			return nil, errors.New("kp, kd: these motors are position servos (Feetech STS) whose position-loop gains are EPROM settings, not per-command values: send POSITION without kp and kd")
		}
	}
	for k, v := range c.Kp {
		if v < 0 {
			return nil, fmt.Errorf("kp[%d]: %g, expected ≥ 0", k, v)
		}
	}
	for k, v := range c.Kd {
		if v < 0 {
			return nil, fmt.Errorf("kd[%d]: %g, expected ≥ 0", k, v)
		}
	}
	at := func(v []float64, k int, def float64) float64 {
		if len(v) == 0 {
			return def
		}
		return v[k]
	}
	sp := make([]*setpoint, len(j.JointNames))
	for k, i := range idx {
		s := &setpoint{kp: at(c.Kp, k, j.Kp[i]), kd: at(c.Kd, k, j.Kd[i])}
		switch c.Mode {
		case msg.ModeVelocity:
			s.dq, s.kp, s.kd = c.Velocities[k], 0, 0
		case msg.ModeTorque:
			// A torque-mode command carries torques only: positions, kp and
			// kd count as zero.
			s.torqueMode, s.tau, s.kp, s.kd = true, c.Torques[k], 0, 0
		case msg.ModeMixed:
			// Each motor takes its own law: kp = kd = 0 makes it
			// torque-controlled, gains make it position-controlled with a
			// feed-forward torque.
			s.torqueMode = true
			s.q, s.dq, s.tau = j.Clamp(i, c.Positions[k]), at(c.Velocities, k, 0), c.Torques[k]
		default:
			// A position-mode command carries no torque: torques are ignored.
			s.q, s.dq = j.Clamp(i, c.Positions[k]), at(c.Velocities, k, 0)
		}
		sp[i] = s
	}
	return sp, nil
}

// Torque is the middleware's control law for one joint, URDF frame:
//
//	τ = kp·(q_des − q) + kd·(dq_des − dq) + τ_ff
func Torque(kp, kd, qDes, q, dqDes, dq, tauFF float64) float64 {
	return kp*(qDes-q) + kd*(dqDes-dq) + tauFF
}
