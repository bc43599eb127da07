package roles

import (
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
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
	basic
	axes     [3]headAxis // pan, tilt, roll
	cfg      headConfig
	speed    float64 // speed factor of the move in progress
	jaw      float64
	hasJaw   bool
	clamped  []string
	lastCmd  time.Time
	timedOut bool
	// lastClampAlert and the axes it named rate-limit the clamp alert.
	lastClampAlert time.Time
	alertedAxes    string

	subs   []bus.Subscription
	timers []*executor.Timer
	sensor headSensors
	camera headCamera
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
}

// headAxis is one head joint: its servo, its limits and travel in degrees,
// and the motion profile's state.
type headAxis struct {
	name, servo string
	min, max    float64 // limits from the configuration
	travel      float64 // the servo's full travel over 500–2500 µs
	pos, vel    float64 // profile setpoint, deg and deg/s
	target      float64
}

// pulse maps an angle to a servo pulse: the servo's travel spans 500–2500
// µs around the 1500 µs neutral.
func (a *headAxis) pulse(deg float64) float64 {
	if a.travel <= 0 {
		return servoNeutralPulseUS
	}
	return servoNeutralPulseUS + deg/(a.travel/2)*(servoMaxPulseUS-servoNeutralPulseUS)
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
	a.vel += clamp(want-a.vel, -amax*dt, amax*dt)
	// The velocity ramps linearly over the step: the travel is its mean.
	next := a.pos + (prev+a.vel)/2*dt
	// Reaching or passing the target within this step ends the move: the
	// braking curve leaves less than one step's travel there.
	if (a.target-next)*err <= 0 || math.Abs(a.target-next) < 1e-9 {
		next, a.vel = a.target, 0
	}
	a.pos = next
}

// Start implements Role.
func (h *Head) Start(env Env) error {
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	if err := h.start(env); err != nil {
		return err
	}
	h.env.Log = env.Log.With("role", "head")
	if err := h.configure(); err != nil {
		h.stop()
		return err
	}
	for i := range h.axes {
		if _, ok := h.pins.pwm[h.axes[i].servo]; !ok {
			h.stop()
			return fmt.Errorf("head: gpio_mapping.%s: want a pwm function for the %s servo", h.axes[i].servo, h.axes[i].name)
		}
	}
	_, h.hasJaw = h.pins.pwm["jaw_servo"]
	h.speed = h.cfg.defaultSpeed
	h.lastCmd = env.Exec.Now()
	h.drive()

	if err := h.subscribe(env.Prefix+"/cmd", func(m bus.Msg) {
		var c msg.HeadCommand
		if err := m.Decode(&c); err != nil {
			h.env.Log.Warn("head command not decoded", "err", err)
			return
		}
		h.command(c)
	}); err != nil {
		h.Stop()
		return err
	}
	if err := h.subscribe(env.Prefix+"/camera/cmd", func(m bus.Msg) {
		var c msg.HeadCameraCommand
		if err := m.Decode(&c); err != nil {
			h.env.Log.Warn("head camera command not decoded", "err", err)
			return
		}
		h.camera.enable(c.Enable)
	}); err != nil {
		h.Stop()
		return err
	}
	dt := h.cfg.controlPeriod.Seconds()
	h.timers = append(h.timers,
		env.Exec.Every(h.cfg.controlPeriod, func() { h.control(dt) }),
		env.Exec.Every(h.cfg.statePeriod, h.publishState))
	h.sensor.start(h)
	h.camera.start(h)
	return nil
}

func (h *Head) subscribe(topic string, f func(bus.Msg)) error {
	sub, err := h.env.Bus.Subscribe(topic, bus.QoS{Depth: 4}, h.env.Exec, f)
	if err != nil {
		return fmt.Errorf("head: subscribe %s: %w", topic, err)
	}
	h.subs = append(h.subs, sub)
	return nil
}

// configure reads limits, servo travel and the profile from the
// configuration.
func (h *Head) configure() error {
	c := h.env.Config
	travel, _ := c.Params["servo_travel"].(map[string]any)
	for i, def := range []struct {
		name           string
		lo, hi, travel float64
	}{{"pan", -180, 180, 360}, {"tilt", -90, 90, 180}, {"roll", -45, 45, 90}} {
		a := headAxis{name: def.name, servo: def.name + "_servo", min: def.lo, max: def.hi, travel: toFloat(travel[def.name], def.travel)}
		if v, ok := c.Limits[def.name].([]any); ok {
			if len(v) != 2 {
				return fmt.Errorf("head: limits.%s: want [min, max] in degrees", def.name)
			}
			a.min, a.max = toFloat(v[0], def.lo), toFloat(v[1], def.hi)
		}
		if a.min > 0 || a.max < 0 || a.min >= a.max {
			return fmt.Errorf("head: limits.%s: [%g, %g] must contain 0 with min < max", def.name, a.min, a.max)
		}
		if a.travel <= 0 || a.max > a.travel/2 || -a.min > a.travel/2 {
			return fmt.Errorf("head: servo_travel.%s: %g° cannot reach limits [%g, %g]", def.name, a.travel, a.min, a.max)
		}
		h.axes[i] = a
	}
	positive := func(field string, v float64) (float64, error) {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("head: %s: %g, want a positive number", field, v)
		}
		return v, nil
	}
	var err error
	cfg := headConfig{}
	if cfg.maxVelocity, err = positive("limits.max_velocity", toFloat(c.Limits["max_velocity"], 180)); err != nil {
		return err
	}
	if cfg.maxAcceleration, err = positive("limits.max_acceleration", toFloat(c.Limits["max_acceleration"], 720)); err != nil {
		return err
	}
	if cfg.maxSpeed, err = positive("limits.max_speed", toFloat(c.Limits["max_speed"], 1)); err != nil {
		return err
	}
	cfg.maxSpeed = math.Min(cfg.maxSpeed, 1)
	if cfg.defaultSpeed, err = positive("default_speed", toFloat(c.Params["default_speed"], 1)); err != nil {
		return err
	}
	cfg.defaultSpeed = math.Min(cfg.defaultSpeed, cfg.maxSpeed)
	period := func(field string, defHz float64) (time.Duration, error) {
		hz, err := positive(field, toFloat(c.Params[field], defHz))
		return time.Duration(float64(time.Second) / hz), err
	}
	if cfg.controlPeriod, err = period("control_rate_hz", 50); err != nil {
		return err
	}
	if cfg.statePeriod, err = period("state_rate_hz", 20); err != nil {
		return err
	}
	ms, err := positive("command_timeout_ms", toFloat(c.Params["command_timeout_ms"], 1000))
	if err != nil {
		return err
	}
	cfg.commandTimeout = time.Duration(ms * float64(time.Millisecond))
	h.cfg = cfg
	return nil
}

// command takes a HeadCommand: new goals, clamped to the limits, reached
// at speed × max_velocity. The WebSocket "head home" arrives as a command
// to (0, 0, 0).
func (h *Head) command(c msg.HeadCommand) {
	goals := [3]float64{float64(c.Pan), float64(c.Tilt), float64(c.Roll)}
	for i, g := range goals {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			h.env.Log.Warn("head command refused: not a number", "axis", h.axes[i].name, "value", g)
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
	h.lastCmd = h.env.Exec.Now()
	h.timedOut = false
	wasClamped := strings.Join(h.clamped, ",")
	h.clamped = h.clamped[:0]
	var cut []string
	for i := range h.axes {
		a := &h.axes[i]
		a.target = clamp(goals[i], a.min, a.max)
		if a.target != goals[i] {
			h.clamped = append(h.clamped, a.name)
			// ASCII, for the console's 5×7 font.
			cut = append(cut, fmt.Sprintf("%s %g -> %g deg", a.name, goals[i], a.target))
		}
	}
	if h.hasJaw && !math.IsNaN(float64(c.Jaw)) {
		h.jaw = clamp(float64(c.Jaw), 0, 1)
	}
	if len(cut) > 0 {
		h.clampAlert(strings.Join(h.clamped, ","), wasClamped, strings.Join(cut, ", "))
	}
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
	now := h.env.Exec.Now()
	since := now.Sub(h.lastClampAlert)
	if !h.lastClampAlert.IsZero() && (since < time.Second ||
		since < headClampRealert && axes == previous && axes == h.alertedAxes) {
		return
	}
	h.lastClampAlert, h.alertedAxes = now, axes
	text := "head command clamped to the configured limits: " + what
	h.env.Log.Warn(text)
	_ = h.env.Bus.Publish(msg.TopicConsoleAlerts, msg.ConsoleAlert{Level: msg.AlertWarning, Message: text,
		Source: h.env.NodeID, Timestamp: float64(now.UnixNano()) / 1e9})
}

// control runs the profile one step and drives the servos.
func (h *Head) control(dt float64) {
	if !h.timedOut && h.env.Exec.Now().Sub(h.lastCmd) >= h.cfg.commandTimeout {
		h.timedOut = true
		h.env.Log.Info("no head command within the timeout: holding the last position", "timeout", h.cfg.commandTimeout)
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
		if err := h.pins.servoPulse(a.servo, a.pulse(a.pos)); err != nil {
			h.env.Log.Warn("servo", "function", a.servo, "err", err)
		}
	}
	if h.hasJaw {
		// The jaw servo closes at 1000 µs and opens at 2000 µs.
		if err := h.pins.servoPulse("jaw_servo", 1000+1000*h.jaw); err != nil {
			h.env.Log.Warn("servo", "function", "jaw_servo", "err", err)
		}
	}
}

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
	_ = h.env.Bus.Publish(h.env.Prefix+"/state", msg.HeadState{Pan: pos.Pan, Tilt: pos.Tilt, Roll: pos.Roll,
		CameraActive: h.camera.active(), Jaw: float32(h.jaw)})
	_ = h.env.Bus.Publish(h.env.Prefix+"/motion", msg.HeadMotion{
		Header:   msg.Header{Stamp: msg.TimeOf(h.env.Exec.Now()), FrameID: "head"},
		Position: pos,
		Target:   angles(func(a headAxis) float64 { return a.target }),
		Velocity: angles(func(a headAxis) float64 { return a.vel }),
		Speed:    float32(h.speed), Moving: h.moving(),
		Clamped: append([]string(nil), h.clamped...), CommandTimeout: h.timedOut,
	})
}

// Stop implements Role: it stops streaming and sampling, then releases the
// pins, which stops the servo pulses.
func (h *Head) Stop() {
	for _, s := range h.subs {
		_ = s.Unsubscribe()
	}
	h.subs = nil
	for _, t := range h.timers {
		t.Stop()
	}
	h.timers = nil
	h.sensor.stop()
	h.camera.stop()
	h.stop()
}

func toFloat(v any, def float64) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return def
}
