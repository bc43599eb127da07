package arms

import (
	"fmt"
	"math"

	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/roles/motor"
)

// armsActuatorsConfig puts the joints on torque-controlled MIT-mode CAN
// actuators (the "actuators" section): the CAN interface, each joint's
// actuator model (hal/device/mitmotor's names), and the host id the
// actuators reply to. motor.map_index gives their CAN ids.
type armsActuatorsConfig struct {
	Bus    string   `yaml:"bus"`
	Models []string `yaml:"models"`
	HostID uint32   `yaml:"host_id"`
}

// armsCAN drives the joints on MIT-mode actuators: every control period
// one command per actuator, whose reply is the next period's feedback.
type armsCAN struct {
	motors []*mitmotor.Motor
	// seen is each actuator's reply count when it was last sent a frame: a
	// count that has not grown since means the actuator did not answer.
	seen []uint64
	// disabled: the actuator was last sent the disable frame.
	disabled []bool
}

// openCAN enables the joint actuators on the configured CAN interface.
func (a *Arms) openCAN() error {
	cfg := a.cfg.Actuators
	bus, err := a.Env.Board.Hardware().CAN(cfg.Bus)
	if err != nil {
		return fmt.Errorf("%s (joint actuators): %w", cfg.Bus, err)
	}
	c := &armsCAN{}
	a.can = c
	a.OnStop(c.close)
	for i, id := range a.cfg.joints.MapIndex {
		m, err := mitmotor.New(bus, uint8(id), a.cfg.models[i], &mitmotor.Options{HostID: cfg.HostID})
		if err != nil {
			return err
		}
		c.motors = append(c.motors, m)
		c.seen = append(c.seen, 0)
		c.disabled = append(c.disabled, false)
	}
	// Motor mode with no command yet applies no torque: the actuators
	// answer (the first feedback) and the arm is held from the first
	// control period on, as with the servos.
	for _, m := range c.motors {
		if err := m.Enable(); err != nil {
			return err
		}
	}
	return nil
}

// read takes every actuator's latest reply into st.
func (c *armsCAN) read(st []armsServo, maxTorque []float64) {
	for i, m := range c.motors {
		r, _, n := m.Reply()
		s := &st[i]
		if n == c.seen[i] {
			s.reachable = false
			continue
		}
		s.reachable, s.polled = true, true
		s.pos, s.vel, s.effort = r.Position, r.Velocity, r.Torque
		s.load = math.Abs(r.Torque) / maxTorque[i]
		// More than two steps of the wire's velocity (0.02–0.03 rad/s):
		// a reply's "0" is itself a step off.
		s.moving = math.Abs(r.Velocity) > 0.05
		s.fault = ""
		if r.Error != 0 {
			s.fault = fmt.Sprintf("reports error %d", r.Error)
		}
	}
}

// write sends each actuator its output, clamped to its ranges. An output
// without torque is the disable frame, every period (the actuator leaves
// motor mode: exactly no torque, where a zero command would still carry
// the wire's rounding of 0 N·m, and it answers); torque again re-enables it
// first. A bus error shows as the missing reply next period.
func (c *armsCAN) write(out []motor.Output) {
	for i, m := range c.motors {
		_, _, c.seen[i] = m.Reply()
		o := out[i]
		if !o.Torque {
			_ = m.Disable()
			c.disabled[i] = true
			continue
		}
		if c.disabled[i] {
			if m.Enable() != nil {
				continue
			}
			c.disabled[i] = false
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

// zero makes every actuator's present position its zero. Each leaves motor
// mode first: an actuator still running its last command would, the moment
// its zero moves, drive the joint by the offset.
func (c *armsCAN) zero(done func(error)) {
	for i, m := range c.motors {
		c.disabled[i] = true
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

// close disables the actuators (no torque, as at power-on) and stops
// listening.
func (c *armsCAN) close() {
	for _, m := range c.motors {
		_ = m.Disable()
		m.Close()
	}
}
