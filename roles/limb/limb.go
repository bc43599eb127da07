package limb

import (
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
	cfg       *config
	mw        *motor.Middleware
	actuators motor.MITActuators
	fb        []motor.Feedback
	// idle is every actuator without torque: the outputs while the
	// middleware does not own the joints.
	idle []motor.Output
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
	if cfg.joints, err = motor.JointsSection(c, &cfg.Motor); err != nil {
		return nil, err
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
	l.OnStop(l.actuators.Close)
	n := len(cfg.joints.JointNames)
	for i, id := range cfg.joints.MapIndex {
		m, err := mitmotor.New(bus, uint8(id), cfg.models[i], &mitmotor.Options{HostID: cfg.Actuators.HostID})
		if err != nil {
			return err
		}
		l.actuators.Add(m)
	}
	l.fb, l.idle = make([]motor.Feedback, n), make([]motor.Output, n)
	maxTorque := make([]float64, n)
	for i, m := range cfg.models {
		maxTorque[i] = m.Torque.Max
	}
	if l.mw, err = motor.New(motor.Options{
		Joints: cfg.joints, TorqueControlled: true, MaxTorque: maxTorque, DampingKd: cfg.DampingKd,
		Calibrate: l.actuators.Zero, SessionTimeout: time.Duration(cfg.DefaultTimeoutMS) * time.Millisecond,
	}); err != nil {
		return err
	}
	l.OnStop(l.mw.Close)
	if err := l.mw.Serve(env.Bus, env.Exec, env.Prefix); err != nil {
		return err
	}
	// Out of motor mode until a session drives them; each disable frame
	// is answered, which is the first feedback.
	l.actuators.Write(l.idle)
	l.Every(time.Duration(float64(time.Second)/cfg.ControlRateHz), l.control)
	l.Every(time.Duration(float64(time.Second)/cfg.StateRateHz), l.mw.PublishState)
	return nil
}

// Stop implements rolekit.Role.
func (l *Limb) Stop() { l.StopAll() }

// control is one control period: the replies in, the middleware's
// outputs (no torque while it does not own the joints) out.
func (l *Limb) control() {
	for i := range l.fb {
		r, fresh := l.actuators.Reply(i)
		f := &l.fb[i]
		if !fresh {
			f.Reachable = false
			continue
		}
		*f = motor.Feedback{Reachable: true, Position: r.Position, Velocity: r.Velocity, Effort: r.Torque}
	}
	out, owns := l.mw.Update(l.fb)
	if !owns {
		out = l.idle
	}
	l.actuators.Write(out)
}
