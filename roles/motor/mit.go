package motor

import "github.com/saint-os/saint/hal/device/mitmotor"

// MITActuators drives a chain of MIT-mode CAN actuators from a
// middleware's outputs: every control period one frame per actuator, whose
// reply is the next period's feedback. The arms on CAN actuators and the
// humanoid's limbs drive theirs through it.
type MITActuators struct {
	motors []*mitmotor.Motor
	// seen is each actuator's reply count when it was last sent a frame:
	// a count that has not grown since means the actuator did not answer.
	seen []uint64
	// disabled: the actuator was last sent the disable frame.
	disabled []bool
}

// Add appends m to the chain; its index is the order of Add calls.
func (a *MITActuators) Add(m *mitmotor.Motor) {
	a.motors = append(a.motors, m)
	a.seen = append(a.seen, 0)
	a.disabled = append(a.disabled, false)
}

// Len is the number of actuators in the chain.
func (a *MITActuators) Len() int { return len(a.motors) }

// Enable puts every actuator in motor mode. With no command yet it
// applies no torque, and it answers: the first feedback.
func (a *MITActuators) Enable() error {
	for i, m := range a.motors {
		if err := m.Enable(); err != nil {
			return err
		}
		a.disabled[i] = false
	}
	return nil
}

// Reply is actuator i's latest reply, and whether it answered since it was
// last sent a frame.
func (a *MITActuators) Reply(i int) (mitmotor.Reply, bool) {
	r, _, n := a.motors[i].Reply()
	return r, n != a.seen[i]
}

// Write sends each actuator its output, clamped to its model's ranges. An
// output without torque is the disable frame, every period (the actuator
// leaves motor mode: exactly no torque, where a zero command would still
// carry the wire's rounding of 0 N·m, and it answers); torque again
// re-enables it first. A bus error shows as the missing reply next period.
func (a *MITActuators) Write(out []Output) {
	for i, m := range a.motors {
		_, _, a.seen[i] = m.Reply()
		o := out[i]
		if !o.Torque {
			_ = m.Disable()
			a.disabled[i] = true
			continue
		}
		if a.disabled[i] {
			if m.Enable() != nil {
				continue
			}
			a.disabled[i] = false
		}
		mo := m.Model()
		// Clamped and finite (the middleware refuses the rest), the
		// command encodes.
		_ = m.Command(mitmotor.Command{
			Position: mo.Position.Clamp(o.Position), Velocity: mo.Velocity.Clamp(o.Velocity),
			Kp: mo.Kp.Clamp(o.Kp), Kd: mo.Kd.Clamp(o.Kd), Torque: mo.Torque.Clamp(o.FeedForward),
		})
	}
}

// Zero makes every actuator's present position its zero (a Calibrate for
// Options). Each leaves motor mode first: an actuator still running its
// last command would, the moment its zero moves, drive the joint by the
// offset.
func (a *MITActuators) Zero(done func(error)) {
	for i, m := range a.motors {
		a.disabled[i] = true
		if err := m.Disable(); err != nil {
			done(err)
			return
		}
		if err := m.Zero(); err != nil {
			done(err)
			return
		}
	}
	done(nil)
}

// Close takes the actuators out of motor mode (no torque, as at power-on)
// and stops listening.
func (a *MITActuators) Close() {
	for _, m := range a.motors {
		_ = m.Disable()
		m.Close()
	}
}
