package head

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/servo"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/roles/rolekit"
)

// Head is the head role: pan/tilt/roll hobby servos following HeadCommand
// through a trapezoidal motion profile within the configured limits,
// HeadState and HeadMotion at state_rate_hz, the MPU6050 on the sensors
// topic, and the camera streamed on camera/image_raw while enabled.
//
// A command is a position goal: the profile accelerates each axis at
// max_acceleration up to max_velocity × speed and brakes to stop on the
// goal, so the servos never see a step. Commands past the limits are cut
// to them, logged and reported on the console's alerts topic.
//
// The deadman: when no command arrives for command_timeout_ms the head
// holds the last commanded position with its servos powered (see
// docs/roles/head.md for why holding, not going limp or homing, is the
// safe state of a head) and says so in HeadMotion.
type Head struct {
	rolekit.Kit
	axes     [3]headAxis // pan, tilt, roll
	cfg      headConfig
	params   headParams
	speed    float64 // speed factor of the move in progress
	jaw      float64
	jawServo *servo.Servo // nil without a jaw_servo function
	// eyes are pan and tilt of the eyes, degrees, and their servos (nil
	// without eyes_pan_servo / eyes_tilt_servo functions).
	eyes      [2]float64
	eyeServos [2]*servo.Servo
	clamped   []string
	lastCmd   time.Time
	timedOut  bool
	link      *rolekit.Link // the server's heartbeat; lost holds the head
	// lastClampAlert and the axes it named rate-limit the clamp alert.
	lastClampAlert time.Time
	alertedAxes    string

	sensor headSensors
	camera headCamera

	// mw is the motor middleware over the three axes (motor.go); limp
	// axes get no pulses (ZERO_TORQUE_MODE).
	mw   *motor.Middleware
	fb   []motor.Feedback // the middleware's feedback, reused each control period
	limp [3]bool
}

// headConfig is the head's part of the role configuration.
type headConfig struct {
	maxVelocity     float64 // deg/s at speed 1
	maxAcceleration float64 // deg/s²
	maxSpeed        float64 // cap on HeadCommand.speed
	defaultSpeed    float64 // for a command with speed 0
	controlPeriod   time.Duration
	statePeriod     time.Duration
	commandTimeout  time.Duration
	linkTimeout     time.Duration
}

// headAxis is one head joint: its servo, its limits and travel in degrees,
// and the motion profile's state.
type headAxis struct {
	name, function string
	servo          *servo.Servo // the servo's travel spans 500–2500 µs
	min, max       float64      // limits from the configuration
	travel         float64      // the servo's full travel, deg
	pos, vel       float64      // profile setpoint, deg and deg/s
	target         float64
}

// step advances the trapezoidal profile by dt: accelerate at amax towards
// the fastest speed (at most vmax) from which the axis can still brake to
// a stop on the target, and land exactly on it.
func (a *headAxis) step(dt, vmax, amax float64) {
	err := a.target - a.pos
	if err == 0 && a.vel == 0 {
		return
	}
	// The fastest new speed w from which braking at amax still stops on
	// the target, counting the travel of this step, where the speed
	// ramps from v to w: w² = 2·amax·(e − (v + w)·dt/2).
	e, v, ad := math.Abs(err), math.Copysign(a.vel, err), amax*dt
	w := 0.0
	if disc := ad*ad + 4*(2*amax*e-ad*v); disc > 0 {
		w = math.Max(0, (math.Sqrt(disc)-ad)/2)
	}
	want := math.Copysign(math.Min(vmax, w), err)
	prev := a.vel
	a.vel += max(-amax*dt, min(amax*dt, want-a.vel))
	// The velocity ramps linearly over the step: the travel is its mean.
	next := a.pos + (prev+a.vel)/2*dt
	// Reaching or passing the target within this step ends the move: the
	// braking curve leaves less than one step's travel there.
	if (a.target-next)*err <= 0 || math.Abs(a.target-next) < 1e-9 {
		next, a.vel = a.target, 0
	}
	a.pos = next
}

// Start implements rolekit.Role.
func (h *Head) Start(env rolekit.Env) error {
	return h.Begin(env, h.open)
}

func (h *Head) open() error {
	env := h.Env
	if err := h.configure(); err != nil {
		return err
	}
	for i := range h.axes {
		a := &h.axes[i]
		pin := h.Pins.PWM(a.function)
		if pin == nil {
			return fmt.Errorf("head: gpio_mapping.%s: want a pwm function for the %s servo", a.function, a.name)
		}
		s, err := servo.New(pin, &servo.Config{Range: a.travel, MinAngle: a.min, MaxAngle: a.max, FreqHz: h.Pins.Frequency(a.function)})
		if err != nil {
			return fmt.Errorf("head: gpio_mapping.%s: %w", a.function, err)
		}
		a.servo = s
	}
	if pin := h.Pins.PWM("jaw_servo"); pin != nil {
		// The jaw's opening, 0 closed to 1 open, is the servo's "angle"
		// plus one half: closed at 1000 µs, open at 2000 µs.
		s, err := servo.New(pin, &servo.Config{MinPulse: 1000 * time.Microsecond, MaxPulse: 2000 * time.Microsecond,
			Range: 1, FreqHz: h.Pins.Frequency("jaw_servo")})
		if err != nil {
			return fmt.Errorf("head: gpio_mapping.jaw_servo: %w", err)
		}
		h.jawServo = s
	}
	for i, e := range eyeAxes() {
		pin := h.Pins.PWM(e.function)
		if pin == nil {
			continue
		}
		// A hobby servo, 500–2500 µs over 180°, limited to the eye's range.
		s, err := servo.New(pin, &servo.Config{Range: 180, MinAngle: -e.limit, MaxAngle: e.limit, FreqHz: h.Pins.Frequency(e.function)})
		if err != nil {
			return fmt.Errorf("head: %s: %w", e.function, err)
		}
		h.eyeServos[i] = s
	}
	h.speed = h.cfg.defaultSpeed
	h.lastCmd = env.Exec.Now()
	h.drive()
	if err := h.openMotors(); err != nil {
		return fmt.Errorf("head: %w", err)
	}

	if err := rolekit.Subscribe(&h.Kit, env.Prefix+"/cmd", bus.QoS{Depth: 4}, h.command); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	h.AdvertiseLimits(h.limits())
	if err := rolekit.Subscribe(&h.Kit, env.Prefix+"/camera/cmd", bus.QoS{Depth: 4}, func(c msg.HeadCameraCommand) {
		h.camera.enable(c.Enable)
	}); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	var err error
	if h.link, err = h.WatchLink(h.cfg.linkTimeout, h.hold, nil); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	dt := h.cfg.controlPeriod.Seconds()
	h.Every(h.cfg.controlPeriod, func() { h.control(dt) })
	h.Every(h.cfg.statePeriod, h.publishState)
	h.sensor.start(h)
	h.OnStop(h.sensor.stop)
	h.camera.start(h)
	h.OnStop(h.camera.stop)
	return nil
}

// headParams are the head's settings in head.yaml, with their defaults.
type headParams struct {
	// ServoTravel is each servo's full travel over 500–2500 µs, deg.
	ServoTravel struct {
		Pan  float64 `yaml:"pan"`
		Tilt float64 `yaml:"tilt"`
		Roll float64 `yaml:"roll"`
	} `yaml:"servo_travel"`
	DefaultSpeed     float64 `yaml:"default_speed"`
	ControlRateHz    float64 `yaml:"control_rate_hz"`
	StateRateHz      float64 `yaml:"state_rate_hz"`
	SensorsRateHz    float64 `yaml:"sensors_rate_hz"`
	CommandTimeoutMS float64 `yaml:"command_timeout_ms"`
	CameraAutostart  bool    `yaml:"camera_autostart"`
	// LinkTimeoutMS is how long without the server's heartbeat before
	// the head stops where it is (0: the default, 200 ms).
	LinkTimeoutMS float64 `yaml:"link_timeout_ms"`
	// RobotID is refused when set: the robot namespace is the node's
	// bus namespace (rolekit.CheckNoRobotID).
	RobotID string `yaml:"robot_id"`
}

// headLimits is the head's limits: section: each axis's [min, max] in
// degrees and the motion profile's bounds.
type headLimits struct {
	Pan             []float64 `yaml:"pan"`
	Tilt            []float64 `yaml:"tilt"`
	Roll            []float64 `yaml:"roll"`
	MaxVelocity     float64   `yaml:"max_velocity"`
	MaxAcceleration float64   `yaml:"max_acceleration"`
	MaxSpeed        float64   `yaml:"max_speed"`
}

// configure reads limits, servo travel and the profile from the
// configuration.
func (h *Head) configure() error {
	c := h.Env.Config
	def := headParams{DefaultSpeed: 1, ControlRateHz: 50, StateRateHz: 20, SensorsRateHz: 50, CommandTimeoutMS: 1000}
	def.ServoTravel.Pan, def.ServoTravel.Tilt, def.ServoTravel.Roll = 360, 180, 90
	p, err := rolekit.Section(c, "", def)
	if err != nil {
		return err
	}
	lim, err := rolekit.Section(c, "limits", headLimits{Pan: []float64{-180, 180}, Tilt: []float64{-90, 90}, Roll: []float64{-45, 45},
		MaxVelocity: 180, MaxAcceleration: 720, MaxSpeed: 1})
	if err != nil {
		return err
	}
	if err := rolekit.CheckNoRobotID(c, p.RobotID); err != nil {
		return err
	}
	h.params = p
	for i, ax := range []struct {
		name   string
		limits []float64
		travel float64
	}{{"pan", lim.Pan, p.ServoTravel.Pan}, {"tilt", lim.Tilt, p.ServoTravel.Tilt}, {"roll", lim.Roll, p.ServoTravel.Roll}} {
		if len(ax.limits) != 2 {
			return c.Errorf("limits."+ax.name, "want [min, max] in degrees")
		}
		a := headAxis{name: ax.name, function: ax.name + "_servo", min: ax.limits[0], max: ax.limits[1], travel: ax.travel}
		if a.min > 0 || a.max < 0 || a.min >= a.max {
			return c.Errorf("limits."+ax.name, "[%g, %g] must contain 0 with min < max", a.min, a.max)
		}
		if a.travel <= 0 || a.max > a.travel/2 || -a.min > a.travel/2 {
			return c.Errorf("servo_travel."+ax.name, "%g° cannot reach limits [%g, %g]", a.travel, a.min, a.max)
		}
		h.axes[i] = a
	}
	for _, v := range []struct {
		field string
		v     float64
	}{{"limits.max_velocity", lim.MaxVelocity}, {"limits.max_acceleration", lim.MaxAcceleration}, {"limits.max_speed", lim.MaxSpeed},
		{"default_speed", p.DefaultSpeed}, {"control_rate_hz", p.ControlRateHz}, {"state_rate_hz", p.StateRateHz},
		{"sensors_rate_hz", p.SensorsRateHz}} {
		if v.v <= 0 || math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			return c.Errorf(v.field, "%g, want a positive number", v.v)
		}
	}
	// The deadman: from a control period to a minute of holding on to a
	// command nobody repeats.
	commandTimeout, err := c.DurationMS("command_timeout_ms", p.CommandTimeoutMS, 20, 60000)
	if err != nil {
		return err
	}
	linkTimeout, err := rolekit.LinkTimeout(c, p.LinkTimeoutMS)
	if err != nil {
		return err
	}
	maxSpeed := math.Min(lim.MaxSpeed, 1)
	h.cfg = headConfig{
		maxVelocity:     lim.MaxVelocity,
		maxAcceleration: lim.MaxAcceleration,
		maxSpeed:        maxSpeed,
		defaultSpeed:    math.Min(p.DefaultSpeed, maxSpeed),
		controlPeriod:   time.Duration(float64(time.Second) / p.ControlRateHz),
		statePeriod:     time.Duration(float64(time.Second) / p.StateRateHz),
		commandTimeout:  commandTimeout,
		linkTimeout:     linkTimeout,
	}
	return nil
}

// command takes a HeadCommand: new goals, clamped to the limits, reached
// at speed × max_velocity. The WebSocket "head home" arrives as a command
// to (0, 0, 0).
func (h *Head) command(c msg.HeadCommand) {
	if h.link != nil && h.link.Lost() {
		return // held: a command queued before the loss must not move the head after it
	}
	if err := h.mw.Yield(); err != nil {
		h.Env.Log.Warn("head command refused", "err", err)
		return
	}
	goals := [3]float64{float64(c.Pan), float64(c.Tilt), float64(c.Roll)}
	for i, g := range goals {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			h.Env.Log.Warn("head command refused: not a number", "axis", h.axes[i].name, "value", g)
			return
		}
	}
	speed := float64(c.Speed)
	switch {
	case math.IsNaN(speed) || speed <= 0:
		speed = h.cfg.defaultSpeed
	case speed > h.cfg.maxSpeed:
		speed = h.cfg.maxSpeed
	}
	h.speed = speed
	h.lastCmd = h.Env.Exec.Now()
	h.timedOut = false
	wasClamped := strings.Join(h.clamped, ",")
	h.clamped = h.clamped[:0]
	var cut []string
	for i := range h.axes {
		a := &h.axes[i]
		a.target = a.servo.Clamp(goals[i])
		if a.target != goals[i] {
			h.clamped = append(h.clamped, a.name)
			// ASCII, for the console's 5×7 font.
			cut = append(cut, fmt.Sprintf("%s %g -> %g deg", a.name, goals[i], a.target))
		}
	}
	if h.jawServo != nil && !math.IsNaN(float64(c.Jaw)) {
		h.jaw = max(0, min(1, float64(c.Jaw)))
	}
	for i, v := range [2]float32{c.EyesPan, c.EyesTilt} {
		if s := h.eyeServos[i]; s != nil && !math.IsNaN(float64(v)) {
			h.eyes[i] = s.Clamp(float64(v))
		}
	}
	if len(cut) > 0 {
		h.clampAlert(strings.Join(h.clamped, ","), wasClamped, strings.Join(cut, ", "))
	}
}

// limits are what command clamps a HeadCommand to: each axis' and eye's
// servo limits, the jaw's 0–1 where there is a jaw, and the speed cap.
func (h *Head) limits() msg.CommandLimits {
	var l msg.CommandLimits
	add := func(field string, s *servo.Servo) {
		c := s.Config()
		l.Fields = append(l.Fields, msg.FieldLimit{Field: field, Min: c.MinAngle, Max: c.MaxAngle})
	}
	for _, a := range h.axes {
		add(a.name, a.servo)
	}
	for i, s := range h.eyeServos {
		if s != nil {
			add([2]string{"eyes_pan", "eyes_tilt"}[i], s)
		}
	}
	if h.jawServo != nil {
		l.Fields = append(l.Fields, msg.FieldLimit{Field: "jaw", Min: 0, Max: 1})
	}
	l.Fields = append(l.Fields, msg.FieldLimit{Field: "speed", Min: 0, Max: h.cfg.maxSpeed})
	return l
}

// hold stops the move in progress as fast as the acceleration limit
// allows and keeps the head where it comes to rest: the server's link is
// lost. The next command after the link returns moves it again.
func (h *Head) hold() {
	for i := range h.axes {
		a := &h.axes[i]
		stop := a.pos + a.vel*math.Abs(a.vel)/(2*h.cfg.maxAcceleration)
		a.target = a.servo.Clamp(stop)
	}
	h.Env.Log.Warn("head holding: server link lost")
}

// headClampRealert is how often a stream of commands that stay clamped on
// the same axes repeats its alert.
const headClampRealert = 10 * time.Second

// clampAlert logs a clamped command and tells the console: when clamping
// starts or moves to other axes (but at most once a second), and every
// headClampRealert while a stream of commands (face capture at the edge of
// the head's range) keeps being clamped the same way, so that the console
// is not flooded.
func (h *Head) clampAlert(axes, previous, what string) {
	now := h.Env.Exec.Now()
	since := now.Sub(h.lastClampAlert)
	if !h.lastClampAlert.IsZero() && (since < time.Second ||
		since < headClampRealert && axes == previous && axes == h.alertedAxes) {
		return
	}
	h.lastClampAlert, h.alertedAxes = now, axes
	text := "head command clamped to the configured limits: " + what
	h.Env.Log.Warn(text)
	_ = h.Env.Bus.Publish(msg.NodeAlertTopic(h.Env.NodeID), msg.ConsoleAlert{Level: msg.AlertWarning, Message: text,
		Source: h.Env.NodeID, Timestamp: float64(now.UnixNano()) / 1e9})
}

// control runs the profile one step and drives the servos.
func (h *Head) control(dt float64) {
	// With the server's link lost nobody may steer the head, a motor
	// session's client included: it holds where hold left it.
	if (h.link == nil || !h.link.Lost()) && h.middleware() {
		for i := range h.axes {
			h.axes[i].step(dt, h.cfg.maxVelocity*h.speed, h.cfg.maxAcceleration)
		}
		h.drive()
		return
	}
	if !h.timedOut && h.Env.Exec.Now().Sub(h.lastCmd) >= h.cfg.commandTimeout {
		h.timedOut = true
		h.Env.Log.Info("no head command within the timeout: holding the last position", "timeout", h.cfg.commandTimeout)
	}
	for i := range h.axes {
		h.axes[i].step(dt, h.cfg.maxVelocity*h.speed, h.cfg.maxAcceleration)
	}
	h.drive()
}

// drive sets each servo's pulse from the profile's setpoint.
func (h *Head) drive() {
	for i := range h.axes {
		a := &h.axes[i]
		if h.limp[i] {
			if _, on := a.servo.Commanded(); on {
				if err := a.servo.Halt(); err != nil {
					h.Env.Log.Warn("servo", "function", a.function, "err", err)
				}
			}
			continue
		}
		if _, err := a.servo.SetAngle(a.pos); err != nil {
			h.Env.Log.Warn("servo", "function", a.function, "err", err)
		}
	}
	if h.jawServo != nil {
		if _, err := h.jawServo.SetAngle(h.jaw - 0.5); err != nil {
			h.Env.Log.Warn("servo", "function", "jaw_servo", "err", err)
		}
	}
	for i, s := range h.eyeServos {
		if s == nil {
			continue
		}
		if _, err := s.SetAngle(h.eyes[i]); err != nil {
			h.Env.Log.Warn("servo", "function", eyeAxes()[i].function, "err", err)
		}
	}
}

// eyeAxis is an eye servo function and its range (±deg).
type eyeAxis struct {
	function string
	limit    float64
}

// eyeAxes are the eyes' optional servo functions: pan, then tilt.
func eyeAxes() [2]eyeAxis { return [2]eyeAxis{{"eyes_pan_servo", 45}, {"eyes_tilt_servo", 30}} }

func (h *Head) moving() bool {
	for _, a := range h.axes {
		if a.pos != a.target || a.vel != 0 {
			return true
		}
	}
	return false
}

func (h *Head) publishState() {
	angles := func(f func(a headAxis) float64) msg.HeadAngles {
		return msg.HeadAngles{Pan: float32(f(h.axes[0])), Tilt: float32(f(h.axes[1])), Roll: float32(f(h.axes[2]))}
	}
	pos := angles(func(a headAxis) float64 { return a.pos })
	_ = h.Env.Bus.Publish(h.Env.Prefix+"/state", msg.HeadState{Pan: pos.Pan, Tilt: pos.Tilt, Roll: pos.Roll,
		CameraActive: h.camera.active(), Jaw: float32(h.jaw), EyesPan: float32(h.eyes[0]), EyesTilt: float32(h.eyes[1])})
	_ = h.Env.Bus.Publish(h.Env.Prefix+"/motion", msg.HeadMotion{
		Header:   msg.Header{Stamp: msg.TimeOf(h.Env.Exec.Now()), FrameID: "head"},
		Position: pos,
		Target:   angles(func(a headAxis) float64 { return a.target }),
		Velocity: angles(func(a headAxis) float64 { return a.vel }),
		Speed:    float32(h.speed), Moving: h.moving(),
		Clamped: append([]string(nil), h.clamped...), CommandTimeout: h.timedOut,
	})
	h.mw.PublishState()
}

// Stop implements rolekit.Role: it stops streaming and sampling, then
// releases the pins, which stops the servo pulses.
func (h *Head) Stop() { h.StopAll() }
