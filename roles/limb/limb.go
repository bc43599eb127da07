package limb

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/roles/rolekit"
)

// Limb is the limb role.
type Limb struct {
	rolekit.Kit
	cfg    *config
	mw     *motor.Middleware
	motors []*mitmotor.Motor
	// seen is each actuator's reply count when it was last sent a frame:
	// a count that has not grown since means it did not answer.
	seen     []uint64
	disabled []bool
	fb       []motor.Feedback
}

// config is the limb role's configuration.
type config struct {
	Actuators struct {
		Bus    string   `yaml:"bus"`
		Models []string `yaml:"models"`
		HostID uint32   `yaml:"host_id"`
	} `yaml:"actuators"`
	ControlRateHz    float64   `yaml:"control_rate_hz"`
	StateRateHz      float64   `yaml:"state_rate_hz"`
	DefaultTimeoutMS int       `yaml:"default_timeout_ms"`
	DampingKd        []float64 `yaml:"damping_kd"`
	// RobotID is refused when set (rolekit.CheckNoRobotID).
	RobotID string    `yaml:"robot_id"`
	Motor   yaml.Node `yaml:"motor"`

	joints *motor.Joints
	models []mitmotor.Model
}

// parseConfig decodes and checks the role's settings; errors name the
// field and its line.
func parseConfig(c *roleconfig.Config) (*config, error) {
	cfg, err := rolekit.Section(c, "", config{ControlRateHz: 200, StateRateHz: 50, DefaultTimeoutMS: 500})
	if err != nil {
		return nil, err
	}
	if err := rolekit.CheckNoRobotID(c, cfg.RobotID); err != nil {
		return nil, err
	}
	if cfg.Motor.Kind == 0 {
		return nil, c.Errorf("motor", "missing (the joint table, in joints.yaml's format)")
	}
	if cfg.joints, err = motor.JointsFromNode(&cfg.Motor); err != nil {
		var pe *motor.ParseError
		if errors.As(err, &pe) {
			return nil, c.Errorf("motor."+pe.Field, "%s", pe.Msg)
		}
		return nil, c.Errorf("motor", "%v", err)
	}
	n := len(cfg.joints.JointNames)
	if cfg.Actuators.Bus == "" {
		return nil, c.Errorf("actuators.bus", "missing (the CAN interface of the actuators, can0)")
	}
	if len(cfg.Actuators.Models) != n {
		return nil, c.Errorf("actuators.models", "%d values, expected %d (one per joint of motor.joint_names)", len(cfg.Actuators.Models), n)
	}
	for i, name := range cfg.Actuators.Models {
		m, err := mitmotor.ModelNamed(name)
		if err != nil {
			return nil, c.Errorf(fmt.Sprintf("actuators.models[%d]", i), "%v", err)
		}
		cfg.models = append(cfg.models, m)
	}
	for i, id := range cfg.joints.MapIndex {
		if id < 1 || id > 127 || uint32(id) == cfg.Actuators.HostID {
			return nil, c.Errorf(fmt.Sprintf("motor.map_index[%d]", i), "%d is not an actuator CAN id (1–127, not actuators.host_id)", id)
		}
	}
	if cfg.DampingKd == nil {
		cfg.DampingKd = cfg.joints.Kd
	}
	if len(cfg.DampingKd) != n {
		return nil, c.Errorf("damping_kd", "%d values, expected %d (one per joint)", len(cfg.DampingKd), n)
	}
	for i, kd := range cfg.DampingKd {
		if !(kd >= 0) || math.IsInf(kd, 0) {
			return nil, c.Errorf(fmt.Sprintf("damping_kd[%d]", i), "%g, expected a number of at least 0", kd)
		}
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"control_rate_hz", cfg.ControlRateHz}, {"state_rate_hz", cfg.StateRateHz}} {
		if !(r.v > 0) || r.v > 1000 {
			return nil, c.Errorf(r.name, "%g, expected more than 0 and at most 1000 Hz", r.v)
		}
	}
	if cfg.DefaultTimeoutMS <= 0 {
		return nil, c.Errorf("default_timeout_ms", "%d, expected a positive number of milliseconds", cfg.DefaultTimeoutMS)
	}
	return &cfg, nil
}

// Start implements rolekit.Role.
func (l *Limb) Start(env rolekit.Env) error {
	cfg, err := parseConfig(env.Config)
	if err != nil {
		return err
	}
	l.cfg = cfg
	return l.Begin(env, func() error {
		if err := l.open(); err != nil {
			return fmt.Errorf("limb: %w", err)
		}
		return nil
	})
}

func (l *Limb) open() error {
	env, cfg := l.Env, l.cfg
	bus, err := env.Board.Hardware().CAN(cfg.Actuators.Bus)
	if err != nil {
		return fmt.Errorf("%s (joint actuators): %w", cfg.Actuators.Bus, err)
	}
	l.OnStop(l.close)
	n := len(cfg.joints.JointNames)
	for i, id := range cfg.joints.MapIndex {
		m, err := mitmotor.New(bus, uint8(id), cfg.models[i], &mitmotor.Options{HostID: cfg.Actuators.HostID})
		if err != nil {
			return err
		}
		l.motors = append(l.motors, m)
	}
	l.seen, l.disabled, l.fb = make([]uint64, n), make([]bool, n), make([]motor.Feedback, n)
	maxTorque := make([]float64, n)
	for i, m := range cfg.models {
		maxTorque[i] = m.Torque.Max
	}
	if l.mw, err = motor.New(motor.Options{
		Joints: cfg.joints, TorqueControlled: true, MaxTorque: maxTorque, DampingKd: cfg.DampingKd,
		Calibrate: l.zero, SessionTimeout: time.Duration(cfg.DefaultTimeoutMS) * time.Millisecond,
	}); err != nil {
		return err
	}
	l.OnStop(l.mw.Close)
	if err := l.mw.Serve(env.Bus, env.Exec, env.Prefix); err != nil {
		return err
	}
	// Out of motor mode until a session drives them; each disable frame
	// is answered, which is the first feedback.
	l.write(make([]motor.Output, n))
	l.Every(time.Duration(float64(time.Second)/cfg.ControlRateHz), l.control)
	l.Every(time.Duration(float64(time.Second)/cfg.StateRateHz), l.mw.PublishState)
	return nil
}

// Stop implements rolekit.Role.
func (l *Limb) Stop() { l.StopAll() }

// control is one control period: the replies in, the middleware's
// outputs (no torque while it does not own the joints) out.
func (l *Limb) control() {
	for i, m := range l.motors {
		r, _, n := m.Reply()
		f := &l.fb[i]
		if n == l.seen[i] {
			f.Reachable = false
			continue
		}
		*f = motor.Feedback{Reachable: true, Position: r.Position, Velocity: r.Velocity, Effort: r.Torque}
	}
	out, owns := l.mw.Update(l.fb)
	if !owns {
		out = make([]motor.Output, len(l.motors))
	}
	l.write(out)
}

// write sends each actuator its output, clamped to its ranges, or the
// disable frame for an output without torque (exactly no torque, where a
// zero command would still carry the wire's rounding of 0 N·m); torque
// again re-enables it first. A bus error shows as the missing reply next
// period.
func (l *Limb) write(out []motor.Output) {
	for i, m := range l.motors {
		_, _, l.seen[i] = m.Reply()
		o := out[i]
		if !o.Torque {
			_ = m.Disable()
			l.disabled[i] = true
			continue
		}
		if l.disabled[i] {
			if m.Enable() != nil {
				continue
			}
			l.disabled[i] = false
		}
		mo := m.Model()
		_ = m.Command(mitmotor.Command{
			Position: mo.Position.Clamp(o.Position), Velocity: mo.Velocity.Clamp(o.Velocity),
			Kp: mo.Kp.Clamp(o.Kp), Kd: mo.Kd.Clamp(o.Kd), Torque: mo.Torque.Clamp(o.FeedForward),
		})
	}
}

// zero makes every actuator's present position its zero, each out of
// motor mode first (an actuator still running its last command would,
// the moment its zero moves, drive the joint by the offset).
func (l *Limb) zero(done func(error)) {
	for i, m := range l.motors {
		l.disabled[i] = true
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

// close takes the actuators out of motor mode (no torque, as at power-on)
// and stops listening.
func (l *Limb) close() {
	for _, m := range l.motors {
		_ = m.Disable()
		m.Close()
	}
}
