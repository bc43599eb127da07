package tracks

import (
	"fmt"
	"math"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
)

// tracksConfig is what the tracks role reads from tracks.yaml besides the
// pins: limits, the command timeout, the state rate, and the drive,
// odometry, speed_control and power sections.
type tracksConfig struct {
	maxLinear, maxAngular           float64 // m/s, rad/s
	maxLinearAccel, maxAngularAccel float64 // m/s², rad/s²
	cmdTimeout                      time.Duration
	linkTimeout                     time.Duration
	statePeriod                     time.Duration
	// brakeOnStop makes an emergency stop or cutoff short the motors
	// through the H-bridges' low sides until the tracks stand still,
	// then disable the bridges (estop_mode: brake); otherwise they are
	// disabled at once and the base coasts (estop_mode: coast).
	brakeOnStop bool

	Drive    tracksDrive    `yaml:"drive"`
	Odometry tracksOdometry `yaml:"odometry"`
	Speed    speedGains     `yaml:"speed_control"`

	// CmdTimeoutMS is how long without a cmd_vel before the tracks ramp
	// to a stop; StateRateHz the TrackState rate; EstopMode coast or
	// brake (see brakeOnStop).
	CmdTimeoutMS float64 `yaml:"cmd_timeout_ms"`
	StateRateHz  float64 `yaml:"state_rate_hz"`
	EstopMode    string  `yaml:"estop_mode"`
	// LinkTimeoutMS is how long without the server's heartbeat before
	// the tracks stop as at an emergency stop (0: the default, 200 ms).
	LinkTimeoutMS float64 `yaml:"link_timeout_ms"`
	// Power is the power monitor's section, decoded by power.ConfigOf.
	Power yaml.Node `yaml:"power"`
	// MotorCurrent is the per-track current sensing: an INA219 on each
	// H-bridge's supply.
	MotorCurrent motorCurrentConfig `yaml:"motor_current"`
}

// tracksLimits is the limits: section.
type tracksLimits struct {
	MaxLinear       float64 `yaml:"max_linear"`        // m/s
	MaxAngular      float64 `yaml:"max_angular"`       // rad/s
	MaxLinearAccel  float64 `yaml:"max_linear_accel"`  // m/s²
	MaxAngularAccel float64 `yaml:"max_angular_accel"` // rad/s²
}

// tracksDrive is the drive: section: geometry, encoders, loop rate.
type tracksDrive struct {
	Gauge          float64 `yaml:"gauge"`           // m between track centres
	SprocketRadius float64 `yaml:"sprocket_radius"` // m
	EncoderCPR     int     `yaml:"encoder_cpr"`     // counts per sprocket turn (x4)
	ControlRateHz  float64 `yaml:"control_rate_hz"`
	// MaxTrackSpeed is the fastest a track is asked to run, m/s: a
	// command that needs more is scaled down, keeping its curvature.
	MaxTrackSpeed float64 `yaml:"max_track_speed"`
	// GaugeFactor and TurnSlip model skid steering: tracks scrape
	// sideways in a turn, so the base turns slower than (v_R −
	// v_L)/gauge. GaugeFactor widens the gauge (the instantaneous-centre
	// model, slip in proportion to the turn rate); TurnSlip is how fast
	// each track slips against the floor to overcome the turning
	// resistance (m/s; Coulomb-like, the same at any turn rate). The
	// commands add the slip to the tracks' difference and the odometry
	// takes it off, both with the effective gauge.
	GaugeFactor float64 `yaml:"gauge_factor"`
	TurnSlip    float64 `yaml:"turn_slip"`
	// SpeedBandwidthHz is the bandwidth of the track speed estimate
	// (speedObserver), which follows the encoder counts rather than
	// the edges' timestamps: a wider band follows faster and passes more
	// of the counts' quantization through.
	SpeedBandwidthHz float64 `yaml:"speed_bandwidth_hz"`
}

// motorCurrentConfig is the motor_current: section: an INA219 in the
// supply line of each BTS7960 (what the bridge draws: the motor's current
// times the duty while driving, negative while it brakes back into the
// supply). Addresses 0 mean not fitted: the currents then read 0.
type motorCurrentConfig struct {
	Bus          int     `yaml:"bus"`
	LeftAddress  int     `yaml:"left_address"`
	RightAddress int     `yaml:"right_address"`
	ShuntOhms    float64 `yaml:"shunt_ohms"`
	MaxCurrent   float64 `yaml:"max_current"`
	RateHz       float64 `yaml:"rate_hz"`
}

// fitted reports whether the section names both sensors.
func (m motorCurrentConfig) fitted() bool { return m.LeftAddress != 0 || m.RightAddress != 0 }

// tracksOdometry is the odometry: section.
type tracksOdometry struct {
	RateHz       float64 `yaml:"rate_hz"`
	FrameID      string  `yaml:"frame_id"`
	ChildFrameID string  `yaml:"child_frame_id"`
	// PoseCovariance and TwistCovariance are the diagonals (x, y, z,
	// roll, pitch, yaw) of the published covariances, as ROS 2
	// diff-drive controllers configure them: large for the axes a flat
	// base does not measure.
	PoseCovariance  []float64 `yaml:"pose_covariance_diagonal"`
	TwistCovariance []float64 `yaml:"twist_covariance_diagonal"`
}

func (c *tracksDrive) effectiveGauge() float64 { return c.Gauge * c.GaugeFactor }

// metresPerCount is how far a track moves per encoder count.
func (c *tracksDrive) metresPerCount() float64 {
	return 2 * math.Pi * c.SprocketRadius / float64(c.EncoderCPR)
}

// minCmdTimeoutMS and maxCmdTimeoutMS bound cmd_timeout_ms: at least a
// router tick (50 Hz), at most 5 s of driving on after the commands stop.
const (
	minCmdTimeoutMS = 20
	maxCmdTimeoutMS = 5000
)

// parseTracksConfig reads the tracks role's settings from cfg, with the
// defaults of the harness for what is left out.
func parseTracksConfig(cfg *roleconfig.Config) (*tracksConfig, error) {
	c, err := rolekit.Section(cfg, "", tracksConfig{
		Drive: tracksDrive{Gauge: 0.40, SprocketRadius: 0.05, EncoderCPR: 880, ControlRateHz: 100,
			MaxTrackSpeed: 1.2, GaugeFactor: 1, SpeedBandwidthHz: 5},
		Odometry: tracksOdometry{RateHz: 50, FrameID: "odom", ChildFrameID: "base_link",
			PoseCovariance:  []float64{1e-3, 1e-3, 1e6, 1e6, 1e6, 1e-2},
			TwistCovariance: []float64{1e-3, 1e-3, 1e6, 1e6, 1e6, 1e-2}},
		Speed:        speedGains{Kp: 0.3, Ki: 3, FeedForwardVoltsPerMPS: 20, NominalVoltage: 24, MaxDuty: 0.95, MaxCorrection: 0.25, StallTimeoutMS: 500},
		CmdTimeoutMS: 500, StateRateHz: 20,
		MotorCurrent: motorCurrentConfig{Bus: 1, ShuntOhms: 0.01, MaxCurrent: 30, RateHz: 20},
	})
	if err != nil {
		return nil, err
	}
	lim, err := rolekit.Section(cfg, "limits", tracksLimits{MaxLinear: 1, MaxAngular: 2, MaxLinearAccel: 1, MaxAngularAccel: 4})
	if err != nil {
		return nil, err
	}
	for _, l := range []struct {
		name string
		v    float64
	}{{"max_linear", lim.MaxLinear}, {"max_angular", lim.MaxAngular}, {"max_linear_accel", lim.MaxLinearAccel}, {"max_angular_accel", lim.MaxAngularAccel}} {
		if !(l.v > 0) || math.IsInf(l.v, 0) {
			return nil, cfg.Errorf("limits."+l.name, "%v, want a positive number", l.v)
		}
	}
	c.maxLinear, c.maxAngular = lim.MaxLinear, lim.MaxAngular
	c.maxLinearAccel, c.maxAngularAccel = lim.MaxLinearAccel, lim.MaxAngularAccel
	if !(c.StateRateHz > 0) {
		return nil, cfg.Errorf("state_rate_hz", "%v, want a positive number", c.StateRateHz)
	}
	if m := c.MotorCurrent; m.fitted() {
		if m.LeftAddress < 0x40 || m.LeftAddress > 0x4F || m.RightAddress < 0x40 || m.RightAddress > 0x4F || m.LeftAddress == m.RightAddress {
			return nil, cfg.Errorf("motor_current", "left_address 0x%02x, right_address 0x%02x: want two different INA219 addresses (0x40–0x4F)", m.LeftAddress, m.RightAddress)
		}
		for _, p := range []struct {
			name string
			v    float64
		}{{"shunt_ohms", m.ShuntOhms}, {"max_current", m.MaxCurrent}, {"rate_hz", m.RateHz}} {
			if !(p.v > 0) || math.IsInf(p.v, 0) {
				return nil, cfg.Errorf("motor_current."+p.name, "%v, want a positive number", p.v)
			}
		}
	}
	// A stream of commands that ends must not leave the base driving for
	// long: the timeout is bounded.
	if c.cmdTimeout, err = cfg.DurationMS("cmd_timeout_ms", c.CmdTimeoutMS, minCmdTimeoutMS, maxCmdTimeoutMS); err != nil {
		return nil, err
	}
	c.statePeriod = time.Duration(float64(time.Second) / c.StateRateHz)
	if c.linkTimeout, err = rolekit.LinkTimeout(cfg, c.LinkTimeoutMS); err != nil {
		return nil, err
	}
	switch c.EstopMode {
	case "", "coast":
	case "brake":
		c.brakeOnStop = true
	default:
		return nil, cfg.Errorf("estop_mode", "%v, want coast or brake", c.EstopMode)
	}
	return &c, c.validate(cfg)
}

// validate checks the settings; errors name the field and its line in cfg.
func (c *tracksConfig) validate(cfg *roleconfig.Config) error {
	d, o, s := c.Drive, c.Odometry, c.Speed
	switch {
	case !(d.Gauge > 0):
		return cfg.Errorf("drive.gauge", "%g m, want > 0", d.Gauge)
	case !(d.SprocketRadius > 0):
		return cfg.Errorf("drive.sprocket_radius", "%g m, want > 0", d.SprocketRadius)
	case d.EncoderCPR <= 0:
		return cfg.Errorf("drive.encoder_cpr", "%d, want > 0", d.EncoderCPR)
	case !(d.ControlRateHz > 0 && d.ControlRateHz <= 2000):
		return cfg.Errorf("drive.control_rate_hz", "%g, want 0 < rate ≤ 2000", d.ControlRateHz)
	case !(d.MaxTrackSpeed > 0):
		return cfg.Errorf("drive.max_track_speed", "%g m/s, want > 0", d.MaxTrackSpeed)
	case !(d.GaugeFactor >= 1 && d.GaugeFactor <= 3):
		return cfg.Errorf("drive.gauge_factor", "%g, want 1 to 3", d.GaugeFactor)
	case !(d.TurnSlip >= 0 && d.TurnSlip < d.MaxTrackSpeed/2):
		return cfg.Errorf("drive.turn_slip", "%g m/s, want 0 ≤ slip < max_track_speed/2", d.TurnSlip)
	case !(d.SpeedBandwidthHz > 0 && 2*2*math.Pi*d.SpeedBandwidthHz < d.ControlRateHz):
		// The observer's discrete update is stable while 2ζω·dt < 1.
		return cfg.Errorf("drive.speed_bandwidth_hz", "%g, want 0 < bandwidth < control_rate_hz/4π (%.1f)",
			d.SpeedBandwidthHz, d.ControlRateHz/(4*math.Pi))
	case !(o.RateHz > 0 && o.RateHz <= d.ControlRateHz):
		return cfg.Errorf("odometry.rate_hz", "%g, want 0 < rate ≤ drive.control_rate_hz (%g)", o.RateHz, d.ControlRateHz)
	case o.FrameID == "" || o.ChildFrameID == "":
		return cfg.Errorf("odometry.frame_id", "%q, child_frame_id %q, want both named", o.FrameID, o.ChildFrameID)
	case len(o.PoseCovariance) != 6:
		return cfg.Errorf("odometry.pose_covariance_diagonal", "%d values, want 6 (x, y, z, roll, pitch, yaw)", len(o.PoseCovariance))
	case len(o.TwistCovariance) != 6:
		return cfg.Errorf("odometry.twist_covariance_diagonal", "%d values, want 6 (x, y, z, roll, pitch, yaw)", len(o.TwistCovariance))
	case s.Kp < 0 || s.Ki < 0 || s.Kd < 0:
		return cfg.Errorf("speed_control", "kp, ki, kd: %g, %g, %g, want ≥ 0", s.Kp, s.Ki, s.Kd)
	case s.FeedForwardVoltsPerMPS < 0 || s.FeedForwardVoltsPerMPS2 < 0:
		return cfg.Errorf("speed_control", "feedforward_volts_per_mps, _mps2: %g, %g, want ≥ 0",
			s.FeedForwardVoltsPerMPS, s.FeedForwardVoltsPerMPS2)
	case !(s.StaticDuty >= 0 && s.StaticDuty < 1):
		return cfg.Errorf("speed_control.static_duty", "%g, want 0 ≤ duty < 1", s.StaticDuty)
	case !(s.NominalVoltage > 0):
		return cfg.Errorf("speed_control.nominal_voltage", "%g V, want > 0", s.NominalVoltage)
	case !(s.MaxDuty > 0 && s.MaxDuty <= 1):
		return cfg.Errorf("speed_control.max_duty", "%g, want 0 < duty ≤ 1", s.MaxDuty)
	case !(s.MaxCorrection > 0 && s.MaxCorrection <= s.MaxDuty):
		return cfg.Errorf("speed_control.max_correction", "%g, want 0 < correction ≤ max_duty", s.MaxCorrection)
	}
	if err := cfg.Between("speed_control.stall_timeout_ms", float64(s.StallTimeoutMS), 50, 60000, "ms"); err != nil {
		return err
	}
	for _, diag := range []struct {
		field string
		v     []float64
	}{{"odometry.pose_covariance_diagonal", o.PoseCovariance}, {"odometry.twist_covariance_diagonal", o.TwistCovariance}} {
		for i, v := range diag.v {
			if !(v >= 0) || math.IsInf(v, 0) {
				return cfg.Errorf(fmt.Sprintf("%s[%d]", diag.field, i), "%g, want a finite variance ≥ 0", v)
			}
		}
	}
	return nil
}
