package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// registerRC registers the spec's WebSocket RC Commands. Status comes from
// the receiver's RCReceiverState on /saint/rc/state; configuration lives
// in the settings (rc), where the receiver reads it.
func (s *Server) registerRC() {
	g := s.gateway
	g.Handle("rc", "get_status", s.rcGetStatus)
	g.Handle("rc", "set_enabled", s.rcSetEnabled)
	g.Handle("rc", "get_channel_config", s.rcGetChannelConfig)
	g.Handle("rc", "set_channel_config", s.rcSetChannelConfig)
	g.Handle("rc", "calibrate_channel", s.rcCalibrateChannel)
	g.Handle("rc", "set_failsafe", s.rcSetFailsafe)
	g.Handle("rc", "get_protocol", s.rcGetProtocol)
	g.Handle("rc", "set_protocol", s.rcSetProtocol)
}

// onRCState records the receiver's latest state (executor).
func (s *Server) onRCState(st msg.RCReceiverState) {
	s.rcState, s.rcAt = &st, s.ex.Now()
}

// rcFresh returns the receiver's state if one arrived within the failsafe
// timeout (executor).
func (s *Server) rcFresh(now time.Time) (msg.RCReceiverState, bool) {
	if s.rcState == nil {
		return msg.RCReceiverState{}, false
	}
	timeout := time.Duration(s.settings.Get().RC.Failsafe.TimeoutMs) * time.Millisecond
	if now.Sub(s.rcAt) > timeout {
		return msg.RCReceiverState{}, false
	}
	return *s.rcState, true
}

// rcChannelView is one channel of get_status, as the spec shows it.
type rcChannelView struct {
	Channel    int     `json:"channel"`
	Raw        int     `json:"raw"`
	Normalized float32 `json:"normalized"`
	Name       string  `json:"name"`
	Failsafe   bool    `json:"failsafe,omitempty"`
}

// rcStatus is get_status' answer (spec: WebSocket RC Commands). Receiver
// says whether a receiver is reporting: "none" until one does.
type rcStatus struct {
	Enabled     bool            `json:"enabled"`
	Connected   bool            `json:"connected"`
	Receiver    string          `json:"receiver"` // "present", "none"
	Protocol    string          `json:"protocol"`
	Failsafe    bool            `json:"failsafe"`
	RSSI        float32         `json:"rssi"`
	FrameRateHz uint32          `json:"frame_rate_hz"`
	Channels    []rcChannelView `json:"channels"`
	Message     string          `json:"message,omitempty"`
}

func (s *Server) rcGetStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	cfg := s.settings.Get().RC
	out := rcStatus{Enabled: cfg.Enabled, Protocol: cfg.Protocol, Receiver: "none", Channels: []rcChannelView{}}
	var st msg.RCReceiverState
	var ok bool
	if err := s.onExec(ctx, func() { st, ok = s.rcFresh(s.ex.Now()) }); err != nil {
		return nil, err
	}
	if !ok {
		out.Message = "no RC receiver: no receiver state received within the signal timeout"
		return out, nil
	}
	names := map[int]string{}
	for _, c := range cfg.Channels {
		names[c.Number] = c.Name
	}
	out.Receiver, out.Connected, out.Failsafe, out.RSSI, out.FrameRateHz = "present", st.Connected, st.Failsafe, st.RSSI, st.FrameRateHz
	if st.Protocol != "" {
		out.Protocol = st.Protocol
	}
	for _, c := range st.Channels {
		n := int(c.ChannelNumber)
		out.Channels = append(out.Channels, rcChannelView{n, int(c.RawValue), c.Normalized, names[n], c.Failsafe})
	}
	return out, nil
}

// rcSettingsErr turns a settings field ("rc.protocol") into the
// parameter the command took ("protocol").
func rcSettingsErr(err error, field string) error {
	var fe *settings.FieldError
	if errors.As(err, &fe) {
		return ws.ParamError(field, "%s", fe.Message)
	}
	return err
}

func (s *Server) rcSetEnabled(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		Enabled *bool `json:"enabled"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Enabled == nil {
		return nil, ws.ParamError("enabled", "required: true or false")
	}
	next, err := s.settings.Update(func(c settings.Settings) (settings.Settings, error) {
		c.RC.Enabled = *p.Enabled
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info(fmt.Sprintf("RC receiver %s", map[bool]string{true: "enabled", false: "disabled"}[*p.Enabled]), "source", "rc")
	return map[string]bool{"enabled": next.RC.Enabled}, nil
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
			return 0, ws.ParamError("channel", "required: 1 to %d", settings.MaxChannels)
		}
		return 0, nil
	}
	if *p.Channel < 1 || *p.Channel > settings.MaxChannels {
		return 0, ws.ParamError("channel", "want 1 to %d, got %d", settings.MaxChannels, *p.Channel)
	}
	return *p.Channel, nil
}

func findChannel(chans []settings.Channel, n int) int {
	for i, c := range chans {
		if c.Number == n {
			return i
		}
	}
	return -1
}

func (s *Server) rcGetChannelConfig(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	n, err := channelParam(raw, false)
	if err != nil {
		return nil, err
	}
	chans := s.settings.Get().RC.Channels
	if n == 0 {
		if chans == nil {
			chans = []settings.Channel{}
		}
		return map[string]any{"channels": chans}, nil
	}
	i := findChannel(chans, n)
	if i < 0 {
		return nil, ws.ParamError("channel", "channel %d is not configured", n)
	}
	return chans[i], nil
}

// rcSetChannelConfig sets a channel's calibration; fields left out keep
// their value (a new channel starts at 1000/1500/2000 µs).
func (s *Server) rcSetChannelConfig(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	n, err := channelParam(raw, true)
	if err != nil {
		return nil, err
	}
	var p struct {
		Name     *string `json:"name"`
		Min      *int    `json:"min"`
		Max      *int    `json:"max"`
		Center   *int    `json:"center"`
		Reversed *bool   `json:"reversed"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	var out settings.Channel
	_, err = s.settings.Update(func(c settings.Settings) (settings.Settings, error) {
		i := findChannel(c.RC.Channels, n)
		if i < 0 {
			c.RC.Channels = append(c.RC.Channels, settings.Channel{Number: n, Min: 1000, Center: 1500, Max: 2000})
			sort.Slice(c.RC.Channels, func(a, b int) bool { return c.RC.Channels[a].Number < c.RC.Channels[b].Number })
			i = findChannel(c.RC.Channels, n)
		}
		ch := &c.RC.Channels[i]
		if p.Name != nil {
			ch.Name = *p.Name
		}
		if p.Min != nil {
			ch.Min = *p.Min
		}
		if p.Max != nil {
			ch.Max = *p.Max
		}
		if p.Center != nil {
			ch.Center = *p.Center
		}
		if p.Reversed != nil {
			ch.Reversed = *p.Reversed
		}
		if err := settings.ValidateChannel("", *ch); err != nil {
			return c, err
		}
		out = *ch
		return c, nil
	})
	if err != nil {
		var fe *settings.FieldError
		if errors.As(err, &fe) {
			return nil, ws.ParamError(fe.Field, "%s", fe.Message)
		}
		return nil, err
	}
	s.log.Info(fmt.Sprintf("RC channel %d configured", n), "source", "rc")
	return out, nil
}

// rcCalibrateChannel stores the channel's current raw value as its min,
// max or center: the operator holds the stick there and asks.
func (s *Server) rcCalibrateChannel(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	n, err := channelParam(raw, true)
	if err != nil {
		return nil, err
	}
	var p struct {
		Position string `json:"position"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Position != "min" && p.Position != "max" && p.Position != "center" {
		return nil, ws.ParamError("position", "want min, max or center, got %q", p.Position)
	}
	var st msg.RCReceiverState
	var ok bool
	if err := s.onExec(ctx, func() { st, ok = s.rcFresh(s.ex.Now()) }); err != nil {
		return nil, err
	}
	if !ok || !st.Connected {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "cannot calibrate: no RC receiver is reporting"}
	}
	value := -1
	for _, c := range st.Channels {
		if int(c.ChannelNumber) == n {
			value = int(c.RawValue)
		}
	}
	if value < 0 {
		return nil, ws.ParamError("channel", "the receiver reports no channel %d", n)
	}
	params, _ := json.Marshal(map[string]int{"channel": n, p.Position: value})
	out, err := s.rcSetChannelConfig(ctx, nil, params)
	if err != nil {
		return nil, err
	}
	return map[string]any{"channel": out, "position": p.Position, "raw": value}, nil
}

func (s *Server) rcSetFailsafe(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
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
	next, err := s.settings.Update(func(c settings.Settings) (settings.Settings, error) {
		c.RC.Failsafe.Action = p.Action
		if p.TimeoutMs != nil {
			c.RC.Failsafe.TimeoutMs = *p.TimeoutMs
		}
		return c, nil
	})
	if err != nil {
		var fe *settings.FieldError
		if errors.As(err, &fe) && fe.Field == "rc.failsafe.timeout_ms" {
			return nil, rcSettingsErr(err, "timeout_ms")
		}
		return nil, rcSettingsErr(err, "action")
	}
	s.log.Info("RC failsafe action set to "+p.Action, "source", "rc")
	return next.RC.Failsafe, nil
}

func (s *Server) rcGetProtocol(context.Context, *ws.Client, json.RawMessage) (any, error) {
	return map[string]any{"protocol": s.settings.Get().RC.Protocol, "supported": settings.Protocols()}, nil
}

func (s *Server) rcSetProtocol(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		Protocol string `json:"protocol"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Protocol == "" {
		return nil, ws.ParamError("protocol", "required: pwm, ppm, sbus, ibus or crsf")
	}
	next, err := s.settings.Update(func(c settings.Settings) (settings.Settings, error) {
		c.RC.Protocol = p.Protocol
		return c, nil
	})
	if err != nil {
		return nil, rcSettingsErr(err, "protocol")
	}
	s.log.Info("RC protocol set to "+p.Protocol, "source", "rc")
	return map[string]any{"protocol": next.RC.Protocol, "supported": settings.Protocols()}, nil
}
