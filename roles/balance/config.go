package balance

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
)

// Config is the balance: section of balance.yaml.
//
//	balance:
//	  pid: {kp: 2.0, ki: 0.0, kd: 0.15}   # A per °, per °·s, per °/s
//	  tilt_limit_deg: 25
//	  speed_limit_pct: 10
//	  ...
type Config struct {
	LoopRateHz      float64   `yaml:"loop_rate_hz"`
	FilterTauS      float64   `yaml:"filter_tau_s"`
	PID             PIDConfig `yaml:"pid"`
	PIDIntegralA    float64   `yaml:"pid_integral_limit_a"`
	SpeedKp         float64   `yaml:"speed_kp"`
	SpeedKi         float64   `yaml:"speed_ki"`
	MaxLeanDeg      float64   `yaml:"max_lean_deg"`
	YawKp           float64   `yaml:"yaw_kp"`
	MaxCurrentA     float64   `yaml:"max_current_a"`
	TiltLimitDeg    float64   `yaml:"tilt_limit_deg"`
	ArmUprightDeg   float64   `yaml:"arm_upright_deg"`
	WatchdogMS      int       `yaml:"watchdog_ms"`
	CANTimeoutMS    int       `yaml:"can_timeout_ms"`
	MaxSpeedMMPS    float64   `yaml:"max_speed_mmps"`
	MaxSteerMrad    float64   `yaml:"max_steer_mrad"`
	SpeedLimitPct   int       `yaml:"speed_limit_pct"`
	TelemetryRateHz float64   `yaml:"telemetry_rate_hz"`
	LinkStateHz     float64   `yaml:"link_state_rate_hz"`
	VESCLeftID      int       `yaml:"vesc_left_id"`
	VESCRightID     int       `yaml:"vesc_right_id"`
	PolePairs       int       `yaml:"pole_pairs"`
	WheelRadiusM    float64   `yaml:"wheel_radius_m"`
	IMUHeightM      float64   `yaml:"imu_height_m"`
	// ArmHoldMS is how long the router's arm switch (/saint/balance/arm)
	// must stay on before the base tries to arm: the reference's 3 s
	// button hold, for arming from the server's RC receiver or a joystick.
	ArmHoldMS int `yaml:"arm_hold_ms"`

	// StateRateHz is the BalanceState rate on the bus: the configuration's
	// top-level state_rate_hz, not a field of this section.
	StateRateHz float64 `yaml:"-"`
	// LinkTimeout is how long without the server's heartbeat before the
	// base stops driving (it keeps balancing): the configuration's
	// top-level link_timeout_ms.
	LinkTimeout time.Duration `yaml:"-"`
}

// params are the balance role's top-level settings besides its section.
type params struct {
	StateRateHz   float64   `yaml:"state_rate_hz"`
	LinkTimeoutMS float64   `yaml:"link_timeout_ms"`
	Balance       yaml.Node `yaml:"balance"`
}

// PIDConfig holds the pitch loop's gains.
type PIDConfig struct {
	Kp float64 `yaml:"kp"`
	Ki float64 `yaml:"ki"`
	Kd float64 `yaml:"kd"`
}

// DefaultConfig is the reference's defaults: tilt cutoff 25°, the
// speed cap at 10 %, a 50 ms watchdog, a 500 ms CAN command timeout,
// telemetry at 10 Hz, VESCs 68 (left) and 56 (right).
func DefaultConfig() Config {
	return Config{
		LoopRateHz: 1000, FilterTauS: 0.5,
		PID: PIDConfig{Kp: 2, Ki: 0, Kd: 0.15}, PIDIntegralA: 5,
		SpeedKp: 6, SpeedKi: 2, MaxLeanDeg: 10, YawKp: 5, MaxCurrentA: 40,
		TiltLimitDeg: 25, ArmUprightDeg: 10, WatchdogMS: 50, CANTimeoutMS: 500,
		MaxSpeedMMPS: 2000, MaxSteerMrad: 2000, SpeedLimitPct: 10,
		TelemetryRateHz: 10, LinkStateHz: 50,
		VESCLeftID: 68, VESCRightID: 56, PolePairs: 15, WheelRadiusM: 0.0825, IMUHeightM: 0.15,
		ArmHoldMS: 3000,
	}
}

// ConfigOf reads the balance section of cfg over the defaults and
// checks it. Errors name the field.
func ConfigOf(cfg *roleconfig.Config) (Config, error) {
	top, err := rolekit.Section(cfg, "", params{StateRateHz: 10})
	if err != nil {
		return DefaultConfig(), err
	}
	bc, err := rolekit.Section(cfg, "balance", DefaultConfig())
	if err != nil {
		return bc, err
	}
	bc.StateRateHz = top.StateRateHz
	if bc.LinkTimeout, err = rolekit.LinkTimeout(cfg, top.LinkTimeoutMS); err != nil {
		return bc, err
	}
	pos := []struct {
		name string
		v    float64
	}{
		{"loop_rate_hz", bc.LoopRateHz}, {"max_current_a", bc.MaxCurrentA},
		{"tilt_limit_deg", bc.TiltLimitDeg}, {"arm_upright_deg", bc.ArmUprightDeg},
		{"max_speed_mmps", bc.MaxSpeedMMPS}, {"telemetry_rate_hz", bc.TelemetryRateHz},
		{"link_state_rate_hz", bc.LinkStateHz}, {"pole_pairs", float64(bc.PolePairs)}, {"wheel_radius_m", bc.WheelRadiusM},
	}
	for _, p := range pos {
		if !(p.v > 0) {
			return bc, cfg.Errorf("balance."+p.name, "%v, want a positive number", p.v)
		}
	}
	// Every duration is bounded; the timeouts that stop the base when its
	// inputs go silent most of all: a long one would let it drive on.
	for _, b := range []struct {
		name string
		v    float64
		min  float64
		max  float64
		unit string
	}{
		{name: "watchdog_ms", v: float64(bc.WatchdogMS), min: 1, max: 1000, unit: "ms"},
		{name: "can_timeout_ms", v: float64(bc.CANTimeoutMS), min: 10, max: 5000, unit: "ms"},
		{name: "arm_hold_ms", v: float64(bc.ArmHoldMS), min: 100, max: 10000, unit: "ms"},
		{name: "filter_tau_s", v: bc.FilterTauS, min: 0.001, max: 10, unit: "s"},
	} {
		if err := cfg.Between("balance."+b.name, b.v, b.min, b.max, b.unit); err != nil {
			return bc, err
		}
	}
	if bc.PID.Kp < 0 || bc.PID.Ki < 0 || bc.PID.Kd < 0 {
		return bc, cfg.Errorf("balance.pid", "%+v, want gains ≥ 0", bc.PID)
	}
	if bc.TiltLimitDeg > 45 {
		return bc, cfg.Errorf("balance.tilt_limit_deg", "%v, want at most 45", bc.TiltLimitDeg)
	}
	if err := checkSpeedLimit(bc.SpeedLimitPct); err != nil {
		return bc, cfg.Errorf("balance.speed_limit_pct", "%v", err)
	}
	for _, id := range []struct {
		name string
		v    int
	}{{"vesc_left_id", bc.VESCLeftID}, {"vesc_right_id", bc.VESCRightID}} {
		if id.v < 0 || id.v > 254 {
			return bc, cfg.Errorf("balance."+id.name, "%d, want a VESC controller id 0–254", id.v)
		}
	}
	return bc, nil
}

// checkSpeedLimit accepts 10–100 % in steps of 10.
func checkSpeedLimit(p int) error {
	if p < 10 || p > 100 || p%10 != 0 {
		return fmt.Errorf("%d %%, want 10–100 in steps of 10", p)
	}
	return nil
}
