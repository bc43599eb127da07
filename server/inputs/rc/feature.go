package rc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/server/feature"
)

// Topic is the WebSocket topic that carries msg.RCReceiverState, from the
// server's own receiver or one elsewhere on the bus.
const Topic = "rc"

// FeatureOptions says where the server keeps the receiver's
// configuration.
type FeatureOptions struct {
	// ConfigDir holds the installation's rc_receiver.yaml (where the
	// device path is set); it is read, never written.
	ConfigDir string
	// DataDir holds the rc_receiver.yaml every change is written to; ""
	// keeps changes in memory.
	DataDir string
	// Ports opens the configured UART: saint-server opens serial devices
	// (hal/serial), the simulator hands over its end of a simulated line
	// with FixedPort. Nil refuses serial receivers.
	Ports PortOpener
	// Pins opens GPIO inputs for PPM and PWM receivers; nil refuses them.
	Pins PinOpener
}

// Feature is the RC receiver as the server runs it: the receiver on the
// executor, its configuration file and its WebSocket commands.
//
// DATA/rc_receiver.yaml is the receiver's one configuration. At the first
// start it does not exist and the receiver starts from
// CONFIG/rc_receiver.yaml, as the router seeds its routes from the shipped
// presets; every change (the rc commands, a calibration) is put in force
// on the live receiver first and then written to DATA/rc_receiver.yaml,
// which later starts read. The settings page shows the configuration
// (View) and changes it with the rc commands.
type Feature struct {
	h    *feature.Host
	rx   *Receiver
	path string // "" keeps the configuration in memory

	ports PortOpener
	pins  PinOpener

	// saveMu orders the writes of the file: each writes the configuration
	// in force when it runs, so the last write holds the last change.
	saveMu sync.Mutex

	// The latest state a receiver published on the bus, and when
	// (executor): one outside this process, when the server's own has no
	// signal.
	remote   *msg.RCReceiverState
	remoteAt time.Time
}

// Register makes the server's RC receiver from the configuration files
// and installs it on h: the receiver as a component, the rc commands
// (get_status, set_enabled, get_channel_config, set_channel_config,
// calibrate_channel, set_failsafe, get_protocol, set_protocol) and the
// "rc" topic. It reads files: call it before the executor runs.
func Register(h *feature.Host, o FeatureOptions) (*Feature, error) {
	f := &Feature{h: h, ports: o.Ports, pins: o.Pins}
	if o.DataDir != "" {
		f.path = filepath.Join(o.DataDir, FileName)
	}
	cfg, err := loadConfig(o.DataDir, o.ConfigDir)
	if err != nil {
		return nil, err
	}
	rx, err := New(Options{
		Exec: h.Exec, Bus: h.Bus, Log: h.Log,
		Ports: func(dev string, lc uart.Config) (uart.Port, func() error, error) {
			if f.ports == nil {
				return nil, nil, errors.New("this server has no serial port access (the simulator attaches its own line)")
			}
			return f.ports(dev, lc)
		},
		Pins: func(bcm int) (gpio.EdgeWatcher, func() error, error) {
			if f.pins == nil {
				return nil, nil, errors.New("this server has no GPIO access")
			}
			return f.pins(bcm)
		},
	}, cfg)
	if err != nil {
		return nil, fmt.Errorf("rc: %s: %w", f.path, err)
	}
	f.rx = rx
	h.Add(rx)
	h.Topics(Topic)
	feature.Subscribe(h, msg.TopicRCState, feature.FeedQoS, func(_ string, st msg.RCReceiverState) {
		f.remote, f.remoteAt = &st, h.Exec.Now()
		h.Gateway.Publish(Topic, st)
	})
	g := h.Gateway
	g.Handle("rc", "get_status", f.getStatus)
	g.Handle("rc", "set_enabled", f.setEnabled)
	g.Handle("rc", "get_channel_config", f.getChannelConfig)
	g.Handle("rc", "set_channel_config", f.setChannelConfig)
	g.Handle("rc", "calibrate_channel", f.calibrateChannel)
	g.Handle("rc", "set_failsafe", f.setFailsafe)
	g.Handle("rc", "get_protocol", f.getProtocol)
	g.Handle("rc", "set_protocol", f.setProtocol)
	return f, nil
}

// loadConfig reads the first rc_receiver.yaml of dirs, or the defaults.
func loadConfig(dirs ...string) (Config, error) {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		name := filepath.Join(dir, FileName)
		data, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Config{}, fmt.Errorf("rc: %w", err)
		}
		cfg, err := Parse(data)
		if err != nil {
			return Config{}, fmt.Errorf("rc: %s: %w", name, err)
		}
		return cfg, nil
	}
	return DefaultConfig(), nil
}

// Receiver returns the receiver; use it on the executor.
func (f *Feature) Receiver() *Receiver { return f.rx }

// View returns the configuration in force, for the settings page.
func (f *Feature) View(ctx context.Context) (any, error) { return f.config(ctx) }

// save writes the configuration in force to rc_receiver.yaml. It does
// file I/O: call it off the executor.
func (f *Feature) save(ctx context.Context) error {
	if f.path == "" {
		return nil
	}
	f.saveMu.Lock()
	defer f.saveMu.Unlock()
	cfg, err := f.config(ctx)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("saving the RC configuration: %w", err)
	}
	if err := persist.WriteFile(f.path, Marshal(cfg), 0o600); err != nil {
		return fmt.Errorf("saving the RC configuration: %w", err)
	}
	return nil
}

// remoteState returns the state a receiver outside the server published
// on the bus within the failsafe timeout, when the server's own receiver
// has never had a signal (executor).
func (f *Feature) remoteState(now time.Time) (msg.RCReceiverState, bool) {
	if !f.rx.Status().LastFrame.IsZero() {
		return msg.RCReceiverState{}, false
	}
	return f.busState(now)
}

// busState returns the latest state published on the bus if it arrived
// within the failsafe timeout (executor).
func (f *Feature) busState(now time.Time) (msg.RCReceiverState, bool) {
	if f.remote == nil || now.Sub(f.remoteAt) > time.Duration(f.rx.Config().Failsafe.TimeoutMs)*time.Millisecond {
		return msg.RCReceiverState{}, false
	}
	return *f.remote, true
}

// state returns the receiver's state: the server's own receiver once it
// has had a signal, otherwise a state from the bus that arrived within
// the failsafe timeout (executor).
func (f *Feature) state(now time.Time) (msg.RCReceiverState, bool) {
	if f.rx.Config().Enabled && !f.rx.Status().LastFrame.IsZero() {
		return f.rx.State(), true
	}
	return f.busState(now)
}

// InputStatus is the RC receiver's line of the dashboard's INPUTS box
// (executor).
func (f *Feature) InputStatus(now time.Time) msg.InputStatus {
	in := msg.InputStatus{Source: msg.SourceRC, Enabled: f.rx.Config().Enabled, Detail: "no receiver"}
	if st, ok := f.state(now); ok {
		in.Active = st.Connected && !st.Failsafe
		in.Detail = fmt.Sprintf("%dch %s", st.ChannelCount, strings.ToUpper(st.Protocol))
		if st.Failsafe {
			in.Detail += " (failsafe)"
		}
	}
	return in
}
