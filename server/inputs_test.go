package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/clock"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/inputs/rc"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// rcServer is a server whose RC receiver reads the simulated transmitter
// over a simulated UART, with its configuration and data directories.
type rcServer struct {
	srv             *server.Server
	tx              *rctx.Serial
	configDir, data string
}

func startRCServer(t *testing.T, configDir, data string) *rcServer {
	t.Helper()
	b := mem.New()
	t.Cleanup(func() { _ = b.Close() })
	// The server's own executor runs on the wall clock, as the line does.
	device, host := uarttest.Pipe(clock.Real{})
	srv, err := server.New(server.Options{Bus: b, RCPorts: rc.FixedPort(host), ConfigDir: configDir, DataDir: data, NoAuth: true, WSAddr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rcServer{srv: srv, configDir: configDir, data: data}
	t.Cleanup(func() {
		if r.tx != nil {
			r.tx.Close()
		}
		srv.Shutdown()
	})
	r.do(t, func() { r.tx, err = rctx.NewSerial(srv.Exec(), device, wire.IBUS, nil) })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rcServer) do(t *testing.T, f func()) {
	t.Helper()
	if err := r.srv.Exec().Do(context.Background(), f); err != nil {
		t.Fatal(err)
	}
}

func (r *rcServer) config(t *testing.T) (c rc.Config) {
	r.do(t, func() { c = r.srv.RCReceiver().Config() })
	return c
}

// TestRCConfigurationFiles: the installation's rc_receiver.yaml starts the
// receiver and the settings show it read-only; a change through the rc
// commands reaches the live receiver and DATA/rc_receiver.yaml, keeping
// what the command does not change (channel types); a change the receiver
// refuses leaves it as it was; a change of the rc section through the
// settings is refused by name; the next start reads DATA's file.
func TestRCConfigurationFiles(t *testing.T) {
	configDir, data := t.TempDir(), t.TempDir()
	yaml := `rc_receiver:
  protocol: ibus
  uart: {device: /dev/sim-rc, baud_rate: 0, inverted: false}
  failsafe: {timeout_ms: 400, action: hold}
  channels:
    - {number: 1, name: steering, min: 1000, max: 2000, center: 1500}
    - {number: 5, name: gripper, min: 1000, max: 2000, center: 1000, type: switch}
`
	if err := os.WriteFile(filepath.Join(configDir, rc.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRCServer(t, configDir, data)
	if err := r.tx.SetAll(2000, 1500, 1500, 1500, 2000); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		var st rc.Status
		r.do(t, func() { st = r.srv.RCReceiver().Status() })
		if !st.Connected || st.Protocol != "ibus" || len(st.Channels) < 5 || st.Channels[4].Normalized != 1 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	c, _, err := dialAPI(t, "ws://"+r.srv.Addrs()["ws"]+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Settings struct {
			RC rc.Config `json:"rc"`
		} `json:"settings"`
		ReadOnly []string `json:"read_only"`
	}
	c.ok("management", "", "get_settings", nil, &view)
	if s := view.Settings.RC; s.Protocol != "ibus" || s.Failsafe.TimeoutMs != 400 || len(s.Channels) != 2 || len(view.ReadOnly) != 1 || view.ReadOnly[0] != "rc" {
		t.Fatalf("settings rc %+v (read-only %v), want the file's, read-only", s, view.ReadOnly)
	}

	// The Inputs page changes the failsafe and channel 5's travel.
	c.ok("rc", "", "set_failsafe", map[string]any{"action": "neutral", "timeout_ms": 250}, nil)
	c.ok("rc", "", "set_channel_config", map[string]any{"channel": 5, "name": "claw", "min": 1100, "max": 1900, "center": 1100}, nil)
	if cfg := r.config(t); cfg.Failsafe.Action != "neutral" || cfg.Failsafe.TimeoutMs != 250 || cfg.Channel(5).Name != "claw" {
		t.Errorf("receiver config %+v", cfg)
	}
	if ch := r.config(t).Channel(5); ch.Type != rc.TypeSwitch || ch.Min != 1100 {
		t.Errorf("channel 5 %+v, want a switch from 1100 µs", ch)
	}
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		b, err := os.ReadFile(filepath.Join(data, rc.FileName))
		if err != nil {
			return err
		}
		c, err := rc.Parse(b)
		if err != nil {
			return err
		}
		if c.Failsafe.Action != "neutral" || c.Channel(5).Type != rc.TypeSwitch || c.Channel(5).Name != "claw" {
			return errors.New("DATA/rc_receiver.yaml not written yet")
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(configDir, rc.FileName)); string(b) != yaml {
		t.Error("the configuration directory's file was rewritten")
	}

	// A stick centred at its minimum is refused by the receiver, which
	// keeps what is in force; the settings cannot change the rc section.
	c.fails("rc", "", "set_channel_config", map[string]any{"channel": 1, "center": 1000}, "invalid_params", "center")
	if cfg := r.config(t); cfg.Channel(1).Center != 1500 {
		t.Errorf("receiver channel 1 %+v", cfg.Channel(1))
	}
	c.fails("management", "", "set_settings", map[string]any{"rc": map[string]any{"enabled": false}}, "invalid_params", "rc")
	if cfg := r.config(t); !cfg.Enabled {
		t.Error("set_settings rc disabled the receiver")
	}

	// The next start reads DATA/rc_receiver.yaml.
	r.tx.Close()
	r.tx = nil
	r.srv.Shutdown()
	r2 := startRCServer(t, configDir, data)
	if c := r2.config(t); c.Failsafe.Action != "neutral" || c.Channel(5).Name != "claw" {
		t.Fatalf("after a restart: %+v", c)
	}
}

// TestRCCommandsLive drives the rc commands over the WebSocket against the
// live receiver: get_status shows the transmitter's sticks, a windowed
// calibration captures the travel the stick is moved through, and bad
// parameters are refused by name.
func TestRCCommandsLive(t *testing.T) {
	configDir := t.TempDir()
	// The transmitter runs on the server's executor on the wall clock; on
	// a loaded machine its frames can stall for longer than the default
	// failsafe timeout, which this test is not about, so it allows the most.
	yaml := fmt.Sprintf("rc_receiver:\n  protocol: ibus\n  failsafe: {timeout_ms: %d, action: hold}\n", rc.MaxTimeoutMs)
	if err := os.WriteFile(filepath.Join(configDir, rc.FileName), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRCServer(t, configDir, t.TempDir())
	c, _, err := dialAPI(t, "ws://"+r.srv.Addrs()["ws"]+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.tx.SetAll(1250, 1500, 1500, 1500, 2000); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Connected   bool   `json:"connected"`
		Receiver    string `json:"receiver"`
		FrameRateHz int    `json:"frame_rate_hz"`
		Channels    []struct {
			Channel    int     `json:"channel"`
			Raw        int     `json:"raw"`
			Micros     int     `json:"us"`
			Normalized float64 `json:"normalized"`
			Name       string  `json:"name"`
		} `json:"channels"`
	}
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		c.ok("rc", "", "get_status", nil, &st)
		// Frames sent before the sticks moved may still be the latest.
		if !st.Connected || len(st.Channels) != wire.IBUSChannels || st.Channels[0].Micros != 1250 {
			return fmt.Errorf("get_status %+v", st)
		}
		return nil
	})
	if ch := st.Channels[0]; st.Receiver != "present" || ch.Raw != 1250 || ch.Micros != 1250 || ch.Normalized != -0.5 || ch.Name != "steering" {
		t.Errorf("channel 1 %+v (receiver %q)", ch, st.Receiver)
	}
	if ch := st.Channels[4]; ch.Normalized != 1 || ch.Name != "gripper" {
		t.Errorf("channel 5 (a switch) %+v", ch)
	}

	// The operator moves channel 2 through its travel and lets go. The
	// margins are wide for a loaded machine, where the transmitter's
	// frames (on the server's executor) and the window's opening can be
	// late: a second for the window to open, each position held 200 ms
	// (about 30 frames), and 3.4 s left in the window after the sweep.
	go func() {
		// The window opens inside the call below, which blocks until it
		// closes: there is no event to wait for from here.
		time.Sleep(time.Second)
		hold := time.NewTicker(200 * time.Millisecond) // each position, about 30 frames
		defer hold.Stop()
		for _, us := range []uint16{1300, 1050, 1012, 1400, 1800, 1988, 1700, 1507} {
			_ = r.tx.Set(2, us)
			<-hold.C
		}
	}()
	var cal struct {
		Channel rc.Channel `json:"channel"`
	}
	c.ok("rc", "", "calibrate_channel", map[string]any{"channel": 2, "duration_ms": 6000}, &cal)
	if ch := cal.Channel; ch.Min != 1012 || ch.Max != 1988 || ch.Center != 1507 || ch.Name != "throttle" {
		t.Fatalf("calibrated %+v, want 1012/1507/1988 µs", ch)
	}
	var ch2 rc.Channel
	c.ok("rc", "", "get_channel_config", map[string]any{"channel": 2}, &ch2)
	if ch2 != cal.Channel {
		t.Errorf("channel 2 config %+v, want the calibration", ch2)
	}

	c.fails("rc", "", "calibrate_channel", map[string]any{"channel": 2, "duration_ms": 9000}, "invalid_params", "duration_ms")
	c.fails("rc", "", "set_channel_config", map[string]any{"channel": 3, "type": "knob"}, "invalid_params", "type")
	c.fails("rc", "", "set_failsafe", map[string]any{"action": "hold", "timeout_ms": 5}, "invalid_params", "timeout_ms")
	c.fails("rc", "", "set_protocol", map[string]any{"protocol": "dsm2"}, "invalid_params", "protocol")
	var sw rc.Channel
	c.ok("rc", "", "set_channel_config", map[string]any{"channel": 3, "type": "switch"}, &sw)
	if sw.Type != rc.TypeSwitch || sw.Center != sw.Min {
		t.Errorf("channel 3 made a switch: %+v", sw)
	}
}
