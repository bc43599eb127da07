package roles

import (
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// axis is one head joint: its servo function and its limits in degrees.
type axis struct {
	servo    string
	min, max float64
}

// pulse maps an angle to a servo pulse: the axis' limits span the servo's
// 500–2500 µs range around the 1500 µs neutral.
func (a axis) pulse(deg float64) float64 {
	half := a.max
	if -a.min > half {
		half = -a.min
	}
	if half <= 0 {
		return servoNeutralPulseUS
	}
	return servoNeutralPulseUS + clamp(deg, a.min, a.max)/half*(servoMaxPulseUS-servoNeutralPulseUS)
}

// Head is the head role: pan/tilt/roll servos driven from HeadCommand,
// HeadState published at the configured rate. Motion is commanded
// position for now; the motion profile, IMU and camera build on this.
type Head struct {
	basic
	pan, tilt, roll axis
	state           msg.HeadState
	sub             bus.Subscription
	tick            *executor.Timer
}

// Start implements Role.
func (h *Head) Start(env Env) error {
	if err := h.start(env); err != nil {
		return err
	}
	lim := func(name string, lo, hi float64) axis {
		a := axis{servo: name + "_servo", min: lo, max: hi}
		if v, ok := env.Config.Limits[name].([]any); ok && len(v) == 2 {
			a.min, a.max = toFloat(v[0], lo), toFloat(v[1], hi)
		}
		return a
	}
	h.pan, h.tilt, h.roll = lim("pan", -180, 180), lim("tilt", -90, 90), lim("roll", -45, 45)
	sub, err := bus.SubscribeJSON(env.Bus, env.Prefix+"/cmd", bus.QoS{Depth: 1}, env.Exec, func(_ string, c msg.HeadCommand) {
		h.command(c)
	})
	if err != nil {
		h.stop()
		return err
	}
	h.sub = sub
	h.tick = env.Exec.Every(ratePeriod(env, 20), func() {
		_ = env.Bus.Publish(env.Prefix+"/state", h.state)
	})
	return nil
}

func (h *Head) command(c msg.HeadCommand) {
	set := func(a axis, deg float32, out *float32) {
		v := clamp(float64(deg), a.min, a.max)
		if err := h.pins.servoPulse(a.servo, a.pulse(v)); err != nil {
			h.env.Log.Warn("servo", "function", a.servo, "err", err)
			return
		}
		*out = float32(v)
	}
	set(h.pan, c.Pan, &h.state.Pan)
	set(h.tilt, c.Tilt, &h.state.Tilt)
	set(h.roll, c.Roll, &h.state.Roll)
}

// Stop implements Role.
func (h *Head) Stop() {
	if h.sub != nil {
		_ = h.sub.Unsubscribe()
	}
	if h.tick != nil {
		h.tick.Stop()
	}
	h.stop()
}

// ratePeriod returns the period of the configuration's state_rate_hz.
func ratePeriod(env Env, defHz float64) time.Duration {
	hz := toFloat(env.Config.Params["state_rate_hz"], defHz)
	if hz <= 0 {
		hz = defHz
	}
	return time.Duration(float64(time.Second) / hz)
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
