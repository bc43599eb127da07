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
	motor.MITActuators
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
	a.OnStop(c.Close)
	for i, id := range a.cfg.joints.MapIndex {
		m, err := mitmotor.New(bus, uint8(id), a.cfg.models[i], &mitmotor.Options{HostID: cfg.HostID})
		if err != nil {
			return err
		}
		c.Add(m)
	}
	// Motor mode with no command yet applies no torque: the actuators
	// answer (the first feedback) and the arm is held from the first
	// control period on, as with the servos.
	return c.Enable()
}

// read takes every actuator's latest reply into st.
func (c *armsCAN) read(st []armsServo, maxTorque []float64) {
	for i := 0; i < c.Len(); i++ {
		r, fresh := c.Reply(i)
		s := &st[i]
		if !fresh {
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
