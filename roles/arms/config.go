package arms

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/roles/rolekit"
)

// armsConfig is the arms role's part of its configuration (arms_left.yaml,
// arms_right.yaml): rates, speed limits, servo data, the gripper, the
// collision thresholds, and the motor middleware's joint table (the
// "motor" section, in joints.yaml's format).
type armsConfig struct {
	StateRateHz   float64 `yaml:"state_rate_hz"`
	ControlRateHz float64 `yaml:"control_rate_hz"`
	// MaxJointSpeedDPS is each joint's speed at speed_factor 1, °/s.
	MaxJointSpeedDPS   []float64 `yaml:"max_joint_speed_dps"`
	DefaultSpeedFactor float64   `yaml:"default_speed_factor"`
	// ServoMaxTorqueNM is each joint servo's torque at 100 % load; with
	// actuators, their models' torque limits when absent.
	ServoMaxTorqueNM []float64 `yaml:"servo_max_torque_nm"`
	// DampingKd is each joint's damping in the middleware's DAMPING_MODE,
	// N·m·s/rad (actuators only: servos cannot damp); absent, joints.yaml's
	// kd.
	DampingKd []float64 `yaml:"damping_kd"`
	// Actuators, when its bus is set, puts the joints on MIT-mode CAN
	// actuators instead of Feetech servos.
	Actuators armsActuatorsConfig `yaml:"actuators"`
	// HomeDeg is the home pose, degrees.
	HomeDeg []float64 `yaml:"home_deg"`

	// RobotID is refused when set: the robot namespace is the node's bus
	// namespace (rolekit.CheckNoRobotID).
	RobotID          string `yaml:"robot_id"`
	DefaultTimeoutMS int    `yaml:"default_timeout_ms"`
	// LinkTimeoutMS is how long without the server's heartbeat before the
	// arm stops (0: the default, 200 ms); LinkLoss is what it does then:
	// hold (the joints hold where they are, the default) or limp (every
	// servo without torque, for an arm that must not resist a person).
	LinkTimeoutMS float64 `yaml:"link_timeout_ms"`
	LinkLoss      string  `yaml:"link_loss"`

	Gripper   armsGripperConfig   `yaml:"gripper_servo"`
	Collision armsCollisionConfig `yaml:"collision"`

	Motor yaml.Node `yaml:"motor"`

	// Joints (names, checked against the joint table) and Gripper
	// (whether the arm has one) describe the arm; Power is the power
	// monitor's section, decoded by power.ConfigOf.
	Joints      []string  `yaml:"joints"`
	HasGripper  bool      `yaml:"gripper"`
	PowerConfig yaml.Node `yaml:"power"`

	joints        *motor.Joints
	models        []mitmotor.Model // the actuators', with Actuators
	controlPeriod time.Duration
	statePeriod   time.Duration
	linkTimeout   time.Duration
	limpOnLoss    bool
}

// armsGripperConfig describes the gripper servo.
type armsGripperConfig struct {
	ID uint8 `yaml:"id"`
	// ClosedDeg and OpenDeg are the servo angles (from its centre) of the
	// closed and fully open gripper.
	ClosedDeg float64 `yaml:"closed_deg"`
	OpenDeg   float64 `yaml:"open_deg"`
	// MaxForceN is the grip force at 100 % load; DefaultForceN is used
	// for a command without a force.
	MaxForceN     float64 `yaml:"max_force_n"`
	DefaultForceN float64 `yaml:"default_force_n"`
	// GraspLoad is the load fraction above which a gripper stopped short
	// of its target holds something.
	GraspLoad float64 `yaml:"grasp_load"`
}

// armsCollisionConfig are the thresholds of collision and stall detection.
type armsCollisionConfig struct {
	// Load is the load fraction above which a lagging joint is pushing
	// against something.
	Load float64 `yaml:"load"`
	// TrackingErrorDeg is the lag behind the setpoint that counts.
	TrackingErrorDeg float64 `yaml:"tracking_error_deg"`
	// Cycles is how many control periods in a row the lag must grow (or
	// stay) beyond TrackingErrorDeg.
	Cycles int `yaml:"cycles"`
}

// parseArmsConfig decodes and checks the arms role's settings.
func parseArmsConfig(c *roleconfig.Config) (*armsConfig, error) {
	cfg, err := rolekit.Section(c, "", armsConfig{
		StateRateHz: 20, ControlRateHz: 50, DefaultSpeedFactor: 0.5, DefaultTimeoutMS: 500,
		Gripper:   armsGripperConfig{ID: 6, ClosedDeg: -180, OpenDeg: 180, MaxForceN: 31.9, DefaultForceN: 10, GraspLoad: 0.05},
		Collision: armsCollisionConfig{Load: 0.8, TrackingErrorDeg: 10, Cycles: 5},
	})
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
	if cfg.Joints != nil && !slices.Equal(cfg.Joints, cfg.joints.JointNames) {
		return nil, c.Errorf("joints", "%v does not match motor.joint_names %v", cfg.Joints, cfg.joints.JointNames)
	}
	if err := cfg.checkActuators(c, n); err != nil {
		return nil, err
	}
	if cfg.DampingKd == nil {
		cfg.DampingKd = cfg.joints.Kd
	}
	for _, f := range []struct {
		name string
		v    []float64
	}{{"max_joint_speed_dps", cfg.MaxJointSpeedDPS}, {"servo_max_torque_nm", cfg.ServoMaxTorqueNM},
		{"damping_kd", cfg.DampingKd}} {
		if len(f.v) != n {
			return nil, c.Errorf(f.name, "%d values, expected %d (one per joint)", len(f.v), n)
		}
		for i, x := range f.v {
			if !(x > 0) || math.IsInf(x, 0) {
				return nil, c.Errorf(fmt.Sprintf("%s[%d]", f.name, i), "%g, expected a positive number", x)
			}
		}
	}
	if cfg.HomeDeg == nil {
		cfg.HomeDeg = make([]float64, n)
	}
	if len(cfg.HomeDeg) != n {
		return nil, c.Errorf("home_deg", "%d values, expected %d (one per joint)", len(cfg.HomeDeg), n)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"state_rate_hz", cfg.StateRateHz}, {"control_rate_hz", cfg.ControlRateHz}, {"default_speed_factor", cfg.DefaultSpeedFactor},
		{"gripper_servo.max_force_n", cfg.Gripper.MaxForceN}, {"collision.load", cfg.Collision.Load},
		{"collision.tracking_error_deg", cfg.Collision.TrackingErrorDeg}} {
		if !(r.v > 0) || math.IsInf(r.v, 0) {
			return nil, c.Errorf(r.name, "%g, expected a positive number", r.v)
		}
	}
	if cfg.DefaultSpeedFactor > 1 {
		return nil, c.Errorf("default_speed_factor", "%g, expected 0 to 1", cfg.DefaultSpeedFactor)
	}
	if cfg.Collision.Cycles < 1 {
		return nil, c.Errorf("collision.cycles", "%d, expected at least 1", cfg.Collision.Cycles)
	}
	// A motor session that stops sending ends after default_timeout_ms:
	// never at once, never after minutes of a stale command.
	if err := c.Between("default_timeout_ms", float64(cfg.DefaultTimeoutMS), 50, 60000, "ms"); err != nil {
		return nil, err
	}
	if cfg.joints.Index(int(cfg.Gripper.ID)) >= 0 {
		return nil, c.Errorf("gripper_servo.id", "%d is also a joint's motor in motor.map_index", cfg.Gripper.ID)
	}
	for i, id := range cfg.joints.MapIndex {
		switch {
		case cfg.Actuators.Bus != "" && (id < 1 || id > 127 || uint32(id) == cfg.Actuators.HostID):
			return nil, c.Errorf(fmt.Sprintf("motor.map_index[%d]", i), "%d is not an actuator CAN id (1–127, not actuators.host_id)", id)
		case id < 0 || id > 253:
			return nil, c.Errorf(fmt.Sprintf("motor.map_index[%d]", i), "%d is not a Feetech servo id", id)
		}
	}
	switch cfg.LinkLoss {
	case "", "hold":
	case "limp":
		cfg.limpOnLoss = true
	default:
		return nil, c.Errorf("link_loss", "%q, expected hold or limp", cfg.LinkLoss)
	}
	if cfg.linkTimeout, err = rolekit.LinkTimeout(c, cfg.LinkTimeoutMS); err != nil {
		return nil, err
	}
	cfg.controlPeriod = time.Duration(float64(time.Second) / cfg.ControlRateHz)
	cfg.statePeriod = time.Duration(float64(time.Second) / cfg.StateRateHz)
	return &cfg, nil
}

// checkActuators resolves the actuators section's models; with it,
// servo_max_torque_nm defaults to their torque limits.
func (cfg *armsConfig) checkActuators(c *roleconfig.Config, n int) error {
	ac := cfg.Actuators
	if ac.Bus == "" {
		if ac.Models != nil {
			return c.Errorf("actuators.bus", "missing (the CAN interface of the actuators, can0)")
		}
		return nil
	}
	if len(ac.Models) != n {
		return c.Errorf("actuators.models", "%d values, expected %d (one per joint)", len(ac.Models), n)
	}
	for i, name := range ac.Models {
		m, err := mitmotor.ModelNamed(name)
		if err != nil {
			return c.Errorf(fmt.Sprintf("actuators.models[%d]", i), "%v", err)
		}
		cfg.models = append(cfg.models, m)
	}
	if cfg.ServoMaxTorqueNM == nil {
		for _, m := range cfg.models {
			cfg.ServoMaxTorqueNM = append(cfg.ServoMaxTorqueNM, m.Torque.Max)
		}
	}
	return nil
}
