package rc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/saint-os/saint/bus/msg"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/server/ws"
)

// statusView is get_status' answer with what
// the receiver knows besides: the input's state, counters, link quality.
// Receiver is "present" once a receiver has sent a frame, "none" before.
type statusView struct {
	Status
	Receiver string `json:"receiver"`
	Message  string `json:"message,omitempty"`
}

func (f *Feature) getStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var st Status
	var cfg Config
	var remote msg.RCReceiverState
	var haveRemote bool
	if err := f.h.Do(ctx, func() {
		st, cfg = f.rx.Status(), f.rx.Config()
		remote, haveRemote = f.remoteState(f.h.Exec.Now())
	}); err != nil {
		return nil, err
	}
	out := statusView{Status: st, Receiver: "present"}
	switch {
	case !st.Enabled:
		out.Receiver, out.Message = "none", "the RC receiver is disabled"
	case st.LastFrame.IsZero() && haveRemote:
		out.Status = remoteStatus(st, cfg, remote)
		out.Message = "reported on " + msg.TopicRCState + " by a receiver outside the server"
	case st.LastFrame.IsZero():
		out.Receiver = "none"
		out.Message = "no RC frame received yet (input: " + st.Input + ")"
	}
	return out, nil
}

// remoteStatus is get_status for a receiver outside the server: its
// state with the channel names and types configured here.
func remoteStatus(local Status, cfg Config, st msg.RCReceiverState) Status {
	out := local
	out.Protocol, out.Connected, out.Failsafe, out.RSSI, out.FrameRateHz = st.Protocol, st.Connected, st.Failsafe, st.RSSI, st.FrameRateHz
	out.Channels = make([]ChannelStatus, 0, len(st.Channels))
	for _, c := range st.Channels {
		us := rawMicros(st.Protocol, c.RawValue)
		ch := cfg.Channel(int(c.ChannelNumber))
		out.Channels = append(out.Channels, ChannelStatus{Channel: ch.Number, Raw: int(c.RawValue), Micros: int(us),
			Normalized: float64(c.Normalized), Name: ch.Name, Type: ch.Type, Failsafe: c.Failsafe})
	}
	return out
}

// rawMicros converts a protocol's raw channel value to µs.
func rawMicros(protocol string, raw uint16) uint16 {
	switch protocol {
	case msg.RCProtocolSBUS:
		return wire.SBUSToMicros(raw)
	case msg.RCProtocolCRSF:
		return wire.CRSFToMicros(raw)
	}
	return raw
}

// change applies change to a copy of the receiver's configuration on the
// executor, puts it in force and saves it. Errors of the configuration
// are reported as the parameter field names (a *FieldError's last
// component: "rc_receiver.failsafe.timeout_ms" → "timeout_ms").
func (f *Feature) change(ctx context.Context, change func(*Config) error) (Config, error) {
	var next Config
	var err error
	if e := f.h.Do(ctx, func() {
		next = f.rx.Config()
		if err = change(&next); err != nil {
			return
		}
		err = f.rx.Apply(next)
		next = f.rx.Config()
	}); e != nil {
		return Config{}, e
	}
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return Config{}, ws.ParamError(paramName(fe.Field), "%s", fe.Message)
		}
		return Config{}, err
	}
	if err := f.save(ctx); err != nil {
		return next, &ws.Error{Code: ws.CodeFailed, Message: "the change is in force but was not saved: " + err.Error()}
	}
	return next, nil
}

// changeChannel changes channel n's configuration with edit and puts it
// in force (change), if the channel then validates.
func (f *Feature) changeChannel(ctx context.Context, n int, edit func(*Channel)) (Channel, error) {
	var out Channel
	_, err := f.change(ctx, func(c *Config) error {
		ch := c.Channel(n)
		edit(&ch)
		if err := ValidateChannel("", ch); err != nil {
			return err
		}
		c.SetChannel(ch)
		out = ch
		return nil
	})
	return out, err
}

// paramName is the last component of a configuration field path.
func paramName(field string) string {
	for i := len(field) - 1; i >= 0; i-- {
		if field[i] == '.' {
			return field[i+1:]
		}
	}
	return field
}

func (f *Feature) setEnabled(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		Enabled *bool `json:"enabled"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Enabled == nil {
		return nil, ws.ParamError("enabled", "required: true or false")
	}
	next, err := f.change(ctx, func(c *Config) error { c.Enabled = *p.Enabled; return nil })
	if err != nil {
		return nil, err
	}
	f.h.Log.Info(fmt.Sprintf("RC receiver %s", map[bool]string{true: "enabled", false: "disabled"}[*p.Enabled]), "source", "rc")
	return map[string]bool{"enabled": next.Enabled}, nil
}

// channelParam reads an optional or required "channel" parameter.
func channelParam(raw json.RawMessage, required bool) (int, error) {
	var p struct {
		Channel *int `json:"channel"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return 0, err
	}
	if p.Channel == nil {
		if required {
			return 0, ws.ParamError("channel", "required: 1 to %d", MaxChannels)
		}
		return 0, nil
	}
	if *p.Channel < 1 || *p.Channel > MaxChannels {
		return 0, ws.ParamError("channel", "want 1 to %d, got %d", MaxChannels, *p.Channel)
	}
	return *p.Channel, nil
}

func (f *Feature) config(ctx context.Context) (Config, error) {
	var cfg Config
	err := f.h.Do(ctx, func() { cfg = f.rx.Config() })
	return cfg, err
}

// getChannelConfig returns one channel's configuration, or every
// configured channel's without a channel parameter.
func (f *Feature) getChannelConfig(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	n, err := channelParam(raw, false)
	if err != nil {
		return nil, err
	}
	cfg, err := f.config(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		chans := cfg.Channels
		if chans == nil {
			chans = []Channel{}
		}
		return map[string]any{"channels": chans}, nil
	}
	return cfg.Channel(n), nil
}

// setChannelConfig sets a channel's calibration; fields left out keep
// their value (a channel not configured yet starts at 1000/1500/2000 µs,
// a stick).
func (f *Feature) setChannelConfig(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	n, err := channelParam(raw, true)
	if err != nil {
		return nil, err
	}
	var p struct {
		Channel  int     `json:"channel"`
		Name     *string `json:"name"`
		Min      *int    `json:"min"`
		Max      *int    `json:"max"`
		Center   *int    `json:"center"`
		Reversed *bool   `json:"reversed"`
		Type     *string `json:"type"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	out, err := f.changeChannel(ctx, n, func(ch *Channel) {
		for _, f := range []struct {
			dst *int
			src *int
		}{{&ch.Min, p.Min}, {&ch.Max, p.Max}, {&ch.Center, p.Center}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if p.Name != nil {
			ch.Name = *p.Name
		}
		if p.Reversed != nil {
			ch.Reversed = *p.Reversed
		}
		if p.Type != nil {
			ch.Type = *p.Type
			if ch.Type == TypeSwitch && p.Center == nil {
				ch.Center = ch.Min
			}
		}
	})
	if err != nil {
		return nil, err
	}
	f.h.Log.Info(fmt.Sprintf("RC channel %d configured", n), "source", "rc")
	return out, nil
}

// Calibration windows the command accepts: within the gateway's request
// timeout.
const (
	calibrateDefault = 3 * time.Second
	calibrateMax     = 8 * time.Second
)

// calibrateChannel calibrates a channel. With "position" (min, max or
// center) it stores the channel's current pulse width there: the operator
// holds the stick and asks. Without, it captures min, max and centre over
// duration_ms (default 3000): the operator moves the stick through its
// travel and lets go before the window ends. The answer is the channel's
// new configuration.
func (f *Feature) calibrateChannel(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	n, err := channelParam(raw, true)
	if err != nil {
		return nil, err
	}
	var p struct {
		Channel    int    `json:"channel"`
		Position   string `json:"position"`
		DurationMs *int   `json:"duration_ms"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Position != "" {
		if p.Position != "min" && p.Position != "max" && p.Position != "center" {
			return nil, ws.ParamError("position", "want min, max or center, got %q", p.Position)
		}
		return f.calibratePosition(ctx, n, p.Position)
	}
	window := calibrateDefault
	if p.DurationMs != nil {
		window = time.Duration(*p.DurationMs) * time.Millisecond
		if window <= 0 || window > calibrateMax {
			return nil, ws.ParamError("duration_ms", "want 1 to %d, got %d", calibrateMax.Milliseconds(), *p.DurationMs)
		}
	}
	type result struct {
		ch  Channel
		err error
	}
	done := make(chan result, 1)
	if err := f.h.Do(ctx, func() {
		f.rx.Calibrate(n, window, func(ch Channel, err error) { done <- result{ch, err} })
	}); err != nil {
		return nil, err
	}
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if res.err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "calibration failed: " + res.err.Error()}
	}
	if err := f.save(ctx); err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "the calibration is in force but was not saved: " + err.Error()}
	}
	return map[string]any{"channel": res.ch, "duration_ms": window.Milliseconds()}, nil
}

// calibratePosition stores the channel's current width as its min, max
// or center.
func (f *Feature) calibratePosition(ctx context.Context, n int, position string) (any, error) {
	var us uint16
	var ok bool
	if err := f.h.Do(ctx, func() {
		if remote, isRemote := f.remoteState(f.h.Exec.Now()); isRemote {
			for _, c := range remote.Channels {
				if int(c.ChannelNumber) == n && remote.Connected && !remote.Failsafe && !c.Failsafe {
					us, ok = rawMicros(remote.Protocol, c.RawValue), true
				}
			}
			return
		}
		if !f.rx.Status().Failsafe {
			us, ok = f.rx.Micros(n)
		}
	}); err != nil {
		return nil, err
	}
	if !ok {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: fmt.Sprintf("cannot calibrate: the RC receiver reports no signal on channel %d", n)}
	}
	out, err := f.changeChannel(ctx, n, func(ch *Channel) {
		switch position {
		case "min":
			ch.Min = int(us)
		case "max":
			ch.Max = int(us)
		case "center":
			ch.Center = int(us)
		}
		if ch.Type == TypeSwitch {
			ch.Center = ch.Min
		}
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"channel": out, "position": position, "us": us}, nil
}

func (f *Feature) setFailsafe(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		Action    string `json:"action"`
		TimeoutMs *int   `json:"timeout_ms"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Action == "" {
		return nil, ws.ParamError("action", "required: hold, neutral, estop or passthrough")
	}
	next, err := f.change(ctx, func(c *Config) error {
		c.Failsafe.Action = p.Action
		if p.TimeoutMs != nil {
			c.Failsafe.TimeoutMs = *p.TimeoutMs
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.h.Log.Info("RC failsafe action set to "+p.Action, "source", "rc")
	return next.Failsafe, nil
}

func (f *Feature) getProtocol(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	cfg, err := f.config(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"protocol": cfg.Protocol, "supported": Protocols()}, nil
}

// setProtocol switches the receiver's protocol, reopening its input;
// "device" optionally names the UART at the same time.
func (f *Feature) setProtocol(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		Protocol string  `json:"protocol"`
		Device   *string `json:"device"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Protocol == "" {
		return nil, ws.ParamError("protocol", "required: pwm, ppm, sbus, ibus or crsf")
	}
	next, err := f.change(ctx, func(c *Config) error {
		if c.Protocol != p.Protocol {
			// Each protocol has its own line speed.
			c.UART.BaudRate = 0
		}
		c.Protocol = p.Protocol
		if p.Device != nil {
			c.UART.Device = *p.Device
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.h.Log.Info("RC protocol set to "+p.Protocol, "source", "rc")
	return map[string]any{"protocol": next.Protocol, "device": next.UART.Device, "supported": Protocols()}, nil
}
