package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/cmd/internal/proctest"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/serial/serialtest"
	"github.com/saint-os/saint/server/inputs/rc"
	"github.com/saint-os/saint/server/ws/wsclient/wsclienttest"
)

// transmitter writes one protocol's frames into the pty master every
// period, as a receiver on a UART would, until stopped.
type transmitter struct {
	stop chan struct{}
	done chan struct{}
}

func transmit(t *testing.T, w *os.File, frame []byte, period time.Duration) *transmitter {
	tx := &transmitter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(tx.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			if _, err := w.Write(frame); err != nil {
				t.Errorf("writing frames: %v", err)
				return
			}
			select {
			case <-tx.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return tx
}

func (tx *transmitter) halt() {
	close(tx.stop)
	<-tx.done
}

type rcStatus struct {
	Enabled        bool   `json:"enabled"`
	Connected      bool   `json:"connected"`
	Receiver       string `json:"receiver"`
	Protocol       string `json:"protocol"`
	Failsafe       bool   `json:"failsafe"`
	FailsafeReason string `json:"failsafe_reason"`
	Input          string `json:"input"`
	RSSI           float64
	LinkQuality    int       `json:"link_quality"`
	LastFrame      time.Time `json:"last_frame"`
	Channels       []struct {
		Channel    int     `json:"channel"`
		Raw        int     `json:"raw"`
		Micros     int     `json:"us"`
		Normalized float64 `json:"normalized"`
		Name       string  `json:"name"`
	} `json:"channels"`
}

// TestRCReceiverOnAPseudoTerminal runs saint-server with a pseudo-terminal
// as its RC UART, writes SBUS, IBUS and CRSF frames into the other end and
// reads the channels back through rc get_status; then it stops the frames
// and checks that the configured failsafe engages, the estop action
// latching the router's emergency stop; last, saintctl rc send drives it
// through a second pseudo-terminal bridged to the first.
func TestRCReceiverOnAPseudoTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-server")
	}
	master, slave := serialtest.OpenPTY(t)
	bin := build(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The installation's file names the device (the pty) and the
	// protocol; the rest is the shipped configuration's.
	yaml := fmt.Sprintf(`rc_receiver:
  enabled: true
  protocol: sbus
  uart: {device: %q, baud_rate: 0, inverted: true}
  failsafe: {timeout_ms: 300, action: hold}
  channels:
    - {number: 1, name: steering, min: 1000, max: 2000, center: 1500}
    - {number: 2, name: throttle, min: 1000, max: 2000, center: 1500, reversed: true}
    - {number: 5, name: gripper, min: 1000, max: 2000, center: 1000, type: switch}
    - {number: 6, name: estop, min: 1000, max: 2000, center: 1000, type: switch}
`, slave)
	if err := os.WriteFile(filepath.Join(data, "config", "rc_receiver.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := proctest.Start(t, bin, "--data", data, "--no-auth", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0",
		"--nats", "127.0.0.1:0", "--firmware-http", "", "--power=false")
	c := wsclienttest.Dial(t, "ws://"+addrs["ws"]+"/saint", "")
	status := func() rcStatus {
		var st rcStatus
		if err := c.Call("rc", "", "get_status", map[string]any{}, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if st := status(); st.Input != "open" {
			return fmt.Errorf("RC input %q, want open", st.Input)
		}
		return nil
	})

	// Sticks: channel 1 right, channel 2 (reversed) three quarters up,
	// channel 5 a switch high, channel 6 the e-stop switch in its run
	// position (high: the shipped rc_estop route stops on low); the rest
	// centred.
	micros := [16]uint16{2000, 1750, 1500, 1500, 2000, 2000, 1500, 1500, 1500, 1500, 1500, 1500, 1500, 1500, 1500, 1500}
	frames := map[string][]byte{}
	var sbus wire.SBUSFrame
	for i, us := range micros {
		sbus.Raw[i] = wire.MicrosToSBUS(us)
	}
	frames["sbus"] = sbus.Append(nil)
	var ibus wire.IBUSFrame
	copy(ibus.Micros[:], micros[:14])
	frames["ibus"] = ibus.Append(nil)
	var crsf [16]uint16
	for i, us := range micros {
		crsf[i] = wire.MicrosToCRSF(us)
	}
	link := wire.LinkStats{UplinkRSSI1: 67, UplinkRSSI2: 70, UplinkLQ: 93, UplinkSNR: 7}
	frames["crsf"] = wire.AppendCRSFChannels(wire.AppendCRSFLinkStats(nil, wire.CRSFAddrFlightController, &link),
		wire.CRSFAddrFlightController, &crsf)

	for _, proto := range []string{"sbus", "ibus", "crsf"} {
		if proto != "sbus" {
			if err := c.Call("rc", "", "set_protocol", map[string]any{"protocol": proto}, nil); err != nil {
				t.Fatal(err)
			}
		}
		tx := transmit(t, master, frames[proto], 10*time.Millisecond)
		var st rcStatus
		bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
			st = status()
			if !st.Connected || st.Protocol != proto || len(st.Channels) < 5 {
				return fmt.Errorf("%s: status %+v", proto, st)
			}
			return nil
		})
		want := []struct {
			us   int
			norm float64
			name string
		}{{2000, 1, "steering"}, {1750, -0.5, "throttle"}, {1500, 0, ""}, {1500, 0, ""}, {2000, 1, "gripper"}}
		for i, w := range want {
			ch := st.Channels[i]
			if ch.Micros != w.us || math.Abs(ch.Normalized-w.norm) > 0.01 || ch.Name != w.name {
				t.Errorf("%s channel %d: %+v, want %d µs, normalized %v, name %q", proto, i+1, ch, w.us, w.norm, w.name)
			}
		}
		if proto == "crsf" && (st.RSSI != -67 || st.LinkQuality != 93) {
			t.Errorf("crsf link: RSSI %v LQ %d, want -67 dBm and 93%%", st.RSSI, st.LinkQuality)
		}
		if proto != "crsf" {
			tx.halt()
			continue
		}

		// Hold: the frames stop, failsafe engages with the last values.
		tx.halt()
		bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
			if st = status(); !st.Failsafe {
				return errors.New("no failsafe after the frames stopped")
			}
			return nil
		})
		if st.Connected || st.FailsafeReason != "signal lost" || st.Channels[0].Normalized != 1 {
			t.Errorf("hold failsafe: %+v, want signal lost with channel 1 held at 1", st)
		}

		// E-stop: frames again, then the action switched, then silence.
		tx = transmit(t, master, frames[proto], 10*time.Millisecond)
		bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
			if st = status(); st.Failsafe || !st.Connected {
				return errors.New("signal not back")
			}
			return nil
		})
		if err := c.Call("rc", "", "set_failsafe", map[string]any{"action": "estop", "timeout_ms": 200}, nil); err != nil {
			t.Fatal(err)
		}
		var router struct {
			EStopActive bool `json:"estop_active"`
		}
		if err := c.Call("router", "", "get_status", nil, &router); err != nil || router.EStopActive {
			t.Fatalf("router before the failsafe: %+v, %v", router, err)
		}
		tx.halt()
		bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
			if err := c.Call("router", "", "get_status", nil, &router); err != nil {
				return err
			}
			if !router.EStopActive {
				return errors.New("the router's emergency stop is not engaged")
			}
			return nil
		})
		if st = status(); !st.Failsafe {
			t.Errorf("router e-stopped but rc status %+v is not in failsafe", st)
		}
	}

	// saintctl rc send, as a technician would use it with a USB serial
	// adapter: its pty's master is bridged to the server's, the cable.
	ctlMaster, ctlSlave := serialtest.OpenPTY(t)
	go func() { _, _ = io.Copy(master, ctlMaster) }()
	ctl := filepath.Join(dir, "saintctl")
	if out, err := exec.Command("go", "build", "-o", ctl, "../saintctl").CombinedOutput(); err != nil {
		t.Fatalf("build saintctl: %v\n%s", err, out)
	}
	if err := c.Call("rc", "", "set_protocol", map[string]any{"protocol": "ibus"}, nil); err != nil {
		t.Fatal(err)
	}
	send := exec.Command(ctl, "rc", "send", "--device", ctlSlave, "--protocol", "ibus", "--ch", "1000,2000,1500,1500,1000,2000", "--rate", "100")
	if err := send.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = send.Process.Kill(); _ = send.Wait() }()
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		st := status()
		if !st.Connected || st.Protocol != "ibus" || len(st.Channels) < 5 || st.Channels[0].Micros != 1000 {
			return fmt.Errorf("saintctl rc send: status %+v", st)
		}
		if st.Channels[1].Normalized != -1 || st.Channels[4].Normalized != 0 {
			return fmt.Errorf("saintctl rc send: channels %+v, want 2 (reversed) at -1 and 5 (switch) at 0", st.Channels)
		}
		return nil
	})

	// The changes made over the API are what the server keeps.
	b, err := os.ReadFile(filepath.Join(data, "rc_receiver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	saved, err := rc.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Protocol != "ibus" || saved.Failsafe.Action != "estop" || saved.Failsafe.TimeoutMs != 200 || saved.UART.Device != slave {
		t.Errorf("saved configuration %+v\n%s", saved, b)
	}
}
