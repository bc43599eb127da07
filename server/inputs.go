package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/node/persist"
	"github.com/saint-os/saint/server/inputs/joystick"
	"github.com/saint-os/saint/server/inputs/rc"
	"github.com/saint-os/saint/server/settings"
)

// rcComponent is the RC receiver as the server runs it: the receiver on
// the executor, and the file that keeps its configuration.
//
// DATA/rc_receiver.yaml is the one source of truth. At the first start it
// does not exist and the receiver starts from CONFIG/rc_receiver.yaml (the
// installation's file, where the device path is set), as the router seeds
// its routes from the shipped presets; every change (the rc commands, a
// calibration, management set_settings on "rc") is applied to the live
// receiver first and then written to DATA/rc_receiver.yaml, which later
// starts read. The configuration directory is never written. The
// settings' "rc" section mirrors the file for the Settings page and is
// rewritten from it at start and after every change.
type rcComponent struct {
	s    *Server
	rx   *rc.Receiver
	path string // "" keeps the configuration in memory

	ports rc.PortOpener
	pins  rc.PinOpener

	// version orders configuration writes: a write older than the last
	// one written is skipped (executor increments, writers compare).
	version uint64
	saveMu  sync.Mutex
	saved   uint64
}

// setupRC builds the RC receiver from the configuration directory's
// rc_receiver.yaml and adds it to the server's components.
func (s *Server) setupRC() error {
	c := &rcComponent{s: s}
	cfg := rc.DefaultConfig()
	if s.o.DataDir != "" {
		c.path = filepath.Join(s.o.DataDir, rc.FileName)
	}
	for _, dir := range []string{s.o.DataDir, s.o.ConfigDir} {
		if dir == "" {
			continue
		}
		name := filepath.Join(dir, rc.FileName)
		data, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		if cfg, err = rc.Parse(data); err != nil {
			return fmt.Errorf("server: %s: %w", name, err)
		}
		break
	}
	rx, err := rc.New(rc.Options{
		Exec: s.ex, Bus: s.o.Bus, Log: s.log,
		Ports: func(dev string, lc uart.Config) (uart.Port, func() error, error) {
			if c.ports == nil {
				return nil, nil, errors.New("this server has no serial port access (the simulator attaches its own line)")
			}
			return c.ports(dev, lc)
		},
		Pins: func(bcm int) (gpio.EdgeWatcher, func() error, error) {
			if c.pins == nil {
				return nil, nil, errors.New("this server has no GPIO access")
			}
			return c.pins(bcm)
		},
	}, cfg)
	if err != nil {
		return fmt.Errorf("server: %s: %w", c.path, err)
	}
	c.rx = rx
	// The settings show what the file says.
	if _, err := s.settings.Update(func(st settings.Settings) (settings.Settings, error) {
		st.RC = rcToSettings(cfg)
		return st, nil
	}); err != nil {
		return fmt.Errorf("server: %s does not fit the settings: %w", c.path, err)
	}
	s.settings.Watch(c.settingsChanged)
	s.Add(c)
	return nil
}

// Start and Stop make the receiver a Component.
func (c *rcComponent) Start() error { return c.rx.Start() }
func (c *rcComponent) Stop()        { c.rx.Stop() }

// rc returns the server's RC receiver component.
func (s *Server) rc() *rcComponent {
	for _, x := range s.extras {
		if c, ok := x.(*rcComponent); ok {
			return c
		}
	}
	return nil
}

// SetRCPorts gives the RC receiver its way to open the configured UART:
// saint-server opens serial devices (hal/serial), saint-sim hands over its
// end of a simulated line with rc.FixedPort. Call it before Start.
func (s *Server) SetRCPorts(open rc.PortOpener) { s.rc().ports = open }

// SetRCPins gives the RC receiver its way to open GPIO inputs for PPM and
// PWM receivers. Call it before Start.
func (s *Server) SetRCPins(open rc.PinOpener) { s.rc().pins = open }

// RCReceiver returns the RC receiver; use it on the executor.
func (s *Server) RCReceiver() *rc.Receiver { return s.rc().rx }

// apply puts next in force on the executor and returns the version to
// save. Call it on the executor.
func (c *rcComponent) apply(next rc.Config) (uint64, error) {
	if err := c.rx.Apply(next); err != nil {
		return 0, err
	}
	c.version++
	return c.version, nil
}

// save writes cfg (configuration version v) to rc_receiver.yaml and
// mirrors it into the settings, unless a newer version was written
// already. It does file I/O: call it off the executor.
func (c *rcComponent) save(cfg rc.Config, v uint64) error {
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	if v <= c.saved {
		return nil
	}
	c.saved = v
	if c.path != "" {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			return fmt.Errorf("saving the RC configuration: %w", err)
		}
		if err := persist.WriteFile(c.path, rc.Marshal(cfg), 0o644); err != nil {
			return fmt.Errorf("saving the RC configuration: %w", err)
		}
	}
	want := rcToSettings(cfg)
	if reflect.DeepEqual(c.s.settings.Get().RC, want) {
		return nil
	}
	_, err := c.s.settings.Update(func(st settings.Settings) (settings.Settings, error) {
		st.RC = want
		return st, nil
	})
	return err
}

// settingsChanged applies a change of the settings' rc section (made with
// management set_settings) to the receiver, which then saves it. It runs
// on the goroutine that changed the settings.
func (c *rcComponent) settingsChanged(st settings.Settings) {
	c.s.ex.Post(func() {
		cur := c.rx.Config()
		next := rcFromSettings(cur, st.RC)
		if reflect.DeepEqual(next, cur) {
			return
		}
		v, err := c.apply(next)
		if err != nil {
			// The receiver's checks are stricter than the settings' (a
			// stick's centre strictly inside its travel): put the
			// settings back to what is in force.
			c.s.log.Warn("RC settings not applied: "+err.Error(), "source", "rc")
			c.version++
			v, next = c.version, cur
		}
		go func() {
			if err := c.save(next, v); err != nil {
				c.s.log.Warn(err.Error(), "source", "rc")
			}
		}()
	})
}

// rcToSettings is the settings' view of a receiver configuration.
func rcToSettings(c rc.Config) settings.RC {
	out := settings.RC{
		Enabled: c.Enabled, Protocol: c.Protocol,
		Failsafe: settings.Failsafe{TimeoutMs: c.Failsafe.TimeoutMs, Action: c.Failsafe.Action},
		UART:     settings.UART{Device: c.UART.Device, BaudRate: c.UART.BaudRate, Inverted: c.UART.Inverted},
		GPIO:     settings.GPIO{PPMPin: c.GPIO.PPMPin, PWMPins: append([]int(nil), c.GPIO.PWMPins...)},
	}
	for _, ch := range c.Channels {
		out.Channels = append(out.Channels, settings.Channel{Number: ch.Number, Name: ch.Name,
			Min: ch.Min, Max: ch.Max, Center: ch.Center, Reversed: ch.Reversed})
	}
	return out
}

// rcFromSettings is base changed as the settings' rc section says; what
// the settings do not hold (channel types, publish rate) stays.
func rcFromSettings(base rc.Config, s settings.RC) rc.Config {
	out := base.Clone()
	out.Enabled, out.Protocol = s.Enabled, s.Protocol
	out.Failsafe = rc.Failsafe{TimeoutMs: s.Failsafe.TimeoutMs, Action: s.Failsafe.Action}
	out.UART = rc.UART{Device: s.UART.Device, BaudRate: s.UART.BaudRate, Inverted: s.UART.Inverted}
	out.GPIO = rc.GPIO{PPMPin: s.GPIO.PPMPin, PWMPins: append([]int(nil), s.GPIO.PWMPins...)}
	out.Channels = nil
	for _, ch := range s.Channels {
		t := base.Channel(ch.Number).Type
		out.Channels = append(out.Channels, rc.Channel{Number: ch.Number, Name: ch.Name,
			Min: ch.Min, Max: ch.Max, Center: ch.Center, Reversed: ch.Reversed, Type: t})
	}
	return out
}

// AddJoystick reads the Linux joystick device (/dev/input/js0) into the
// router as source "joystick", reopening it whenever it is plugged back
// in. Call it before Start.
func (s *Server) AddJoystick(device string) error {
	j, err := joystick.New(joystick.Options{Exec: s.ex, Device: device, Router: s.router, Log: s.log})
	if err != nil {
		return err
	}
	s.Add(j)
	return nil
}
