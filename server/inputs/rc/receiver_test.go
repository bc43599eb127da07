package rc

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// rig is a receiver on a virtual executor and an in-process bus, with what
// it publishes collected.
type rig struct {
	t      *testing.T
	ex     *executor.Executor
	bus    *mem.Bus
	rx     *Receiver
	states []msg.RCReceiverState
	inputs []msg.RouterInput
	stAt   []time.Time
}

// do runs f on the executor now.
func (r *rig) do(f func()) {
	r.ex.Post(f)
	r.run(0)
}

func (r *rig) run(d time.Duration) {
	r.t.Helper()
	if err := r.ex.RunFor(context.Background(), d); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) last() msg.RCReceiverState {
	r.t.Helper()
	if len(r.states) == 0 {
		r.t.Fatal("no RCReceiverState published")
	}
	return r.states[len(r.states)-1]
}

func (r *rig) status() (st Status) {
	r.do(func() { st = r.rx.Status() })
	return st
}

func serialConfig(p string) Config {
	c := DefaultConfig()
	c.Protocol = p
	c.UART.Device = "/dev/sim-rc"
	return c
}

// serialRig is a receiver reading the simulated transmitter over a
// simulated UART, as saint-sim wires them.
func serialRig(t *testing.T, cfg Config, o *rctx.SerialOptions) (*rig, *rctx.Serial) {
	t.Helper()
	ex := executor.NewVirtual()
	device, server := uarttest.Pipe(ex.Clock())
	rg := newRigOn(t, ex, cfg, Options{Ports: FixedPort(server)})
	tx, err := rctx.NewSerial(ex, device, wire.Protocol(cfg.Protocol), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.Close)
	return rg, tx
}

// newRigOn is newRig on a given executor.
func newRigOn(t *testing.T, ex *executor.Executor, cfg Config, o Options) *rig {
	t.Helper()
	r := &rig{t: t, ex: ex, bus: mem.New()}
	t.Cleanup(func() { _ = r.bus.Close() })
	o.Exec, o.Bus, o.Log = r.ex, r.bus, slog.New(slog.DiscardHandler)
	var err error
	if r.rx, err = New(o, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(r.bus, msg.TopicRCState, bus.QoS{Depth: 1000}, r.ex, func(_ string, s msg.RCReceiverState) {
		r.states = append(r.states, s)
		r.stAt = append(r.stAt, r.ex.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(r.bus, msg.TopicRouterInput, bus.QoS{Depth: 1000}, r.ex, func(_ string, in msg.RouterInput) {
		r.inputs = append(r.inputs, in)
	}); err != nil {
		t.Fatal(err)
	}
	r.do(func() {
		if err := r.rx.Start(); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { r.do(r.rx.Stop) })
	return r
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestSerialProtocols sends stick positions from the simulated
// transmitter over each serial protocol and checks the published state:
// raw values as the protocol carries them, normalised values through the
// channel configuration, the measured frame rate and CRSF's RSSI.
func TestSerialProtocols(t *testing.T) {
	for _, tc := range []struct {
		proto  string
		period time.Duration
		raw    func(us uint16) uint16
	}{
		{msg.RCProtocolSBUS, wire.SBUSPeriod, wire.MicrosToSBUS},
		{msg.RCProtocolIBUS, wire.IBUSPeriod, func(us uint16) uint16 { return us }},
		{msg.RCProtocolCRSF, wire.CRSFPeriod, wire.MicrosToCRSF},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			cfg := serialConfig(tc.proto)
			cfg.Channels[2].Reversed = true // head_tilt
			r, tx := serialRig(t, cfg, nil)
			if err := tx.SetAll(2000, 1000, 1750, 1250, 2000, 1000); err != nil {
				t.Fatal(err)
			}
			if tc.proto == msg.RCProtocolCRSF {
				if err := tx.SetLink(-72, 87); err != nil {
					t.Fatal(err)
				}
			}
			r.run(time.Second)
			st := r.last()
			if !st.Connected || st.Failsafe || st.Protocol != tc.proto {
				t.Fatalf("state %+v, want connected, no failsafe, protocol %s", st, tc.proto)
			}
			want := []float64{1, -1, -0.5, -0.5, 1, 0}
			for i, w := range want {
				c := st.Channels[i]
				if !near(float64(c.Normalized), w, 0.01) {
					t.Errorf("channel %d normalized %v, want %v", i+1, c.Normalized, w)
				}
			}
			for i, us := range []uint16{2000, 1000, 1750} {
				if got := st.Channels[i].RawValue; got != tc.raw(us) {
					t.Errorf("channel %d raw %d, want %d", i+1, got, tc.raw(us))
				}
			}
			wantHz := float64(time.Second) / float64(tc.period)
			if !near(float64(st.FrameRateHz), wantHz, 1) {
				t.Errorf("frame rate %d Hz, want %.0f", st.FrameRateHz, wantHz)
			}
			// One state per frame.
			if n := len(r.states); float64(n) < wantHz-2 {
				t.Errorf("%d states in 1 s, want one per frame (%.0f)", n, wantHz)
			}
			s := r.status()
			if tc.proto == msg.RCProtocolCRSF && (s.RSSI != -72 || s.LinkQuality != 87) {
				t.Errorf("RSSI %v dBm LQ %d%%, want -72 dBm 87%%", s.RSSI, s.LinkQuality)
			}
			if s.Channels[0].Micros != 2000 || s.Channels[0].Name != "steering" {
				t.Errorf("status channel 1 %+v, want 2000 µs named steering", s.Channels[0])
			}
		})
	}
}

// TestFailsafeActions cuts the link and checks each action: failsafe is
// declared once timeout_ms has passed since the last frame (not before),
// and the router gets what the action says.
func TestFailsafeActions(t *testing.T) {
	for _, action := range FailsafeActions() {
		t.Run(action, func(t *testing.T) {
			cfg := serialConfig(msg.RCProtocolIBUS)
			cfg.Failsafe = Failsafe{TimeoutMs: 300, Action: action}
			r, tx := serialRig(t, cfg, nil)
			if err := tx.SetAll(1750, 2000, 1500, 1500, 2000); err != nil {
				t.Fatal(err)
			}
			r.run(200 * time.Millisecond)
			tx.SetLinkLost(true)
			var lastFrame time.Time
			r.do(func() { lastFrame = r.rx.Status().LastFrame })
			r.run(250 * time.Millisecond)
			if st := r.last(); st.Failsafe {
				t.Fatalf("failsafe %v before the timeout", r.ex.Now().Sub(lastFrame))
			}
			if len(r.inputs) != 0 {
				t.Fatalf("router inputs before the failsafe: %+v", r.inputs)
			}
			r.run(100 * time.Millisecond)
			st := r.last()
			if !st.Failsafe || st.Connected {
				t.Fatalf("state %+v, want failsafe and not connected %v after the last frame", st, r.ex.Now().Sub(lastFrame))
			}
			for i, at := range r.stAt {
				if r.states[i].Failsafe && at.Sub(lastFrame) < 300*time.Millisecond {
					t.Fatalf("failsafe published %v after the last frame, before timeout_ms", at.Sub(lastFrame))
				}
			}
			ch1 := float64(st.Channels[0].Normalized)
			switch action {
			case msg.FailsafeHold:
				if !near(ch1, 0.5, 0.01) || len(r.inputs) == 0 || !near(float64(r.inputs[len(r.inputs)-1].Values["channel_1"]), 0.5, 0.01) {
					t.Fatalf("hold: channel 1 %v, router inputs %+v; want 0.5 held", ch1, r.inputs)
				}
			case msg.FailsafeNeutral:
				in := r.inputs[len(r.inputs)-1]
				if ch1 != 0 || in.Values["channel_1"] != 0 || in.Values["channel_5"] != 0 {
					t.Fatalf("neutral: channel 1 %v, router input %+v; want sticks and switches at 0", ch1, in)
				}
			case msg.FailsafeEStop:
				if len(r.inputs) != 1 || r.inputs[0].Command != "estop" || r.inputs[0].Values["enable"] != 1 {
					t.Fatalf("estop: router inputs %+v, want one estop command", r.inputs)
				}
			case msg.FailsafePassthrough:
				if len(r.inputs) != 0 {
					t.Fatalf("passthrough: router inputs %+v, want none", r.inputs)
				}
			}
			// Held routes stay fresh: the state keeps coming while lost.
			n := len(r.states)
			r.run(time.Second)
			if got := len(r.states) - n; got < 8 {
				t.Errorf("%d states in 1 s of failsafe, want about %d", got, time.Second/FailsafePeriod)
			}
			tx.SetLinkLost(false)
			r.run(100 * time.Millisecond)
			if st := r.last(); st.Failsafe || !st.Connected {
				t.Fatalf("state %+v after the link came back, want connected", st)
			}
		})
	}
}

// TestSBUSFailsafeFlag: an SBUS receiver that keeps sending with its
// failsafe flag puts the server in failsafe at once, with the last real
// positions held.
func TestSBUSFailsafeFlag(t *testing.T) {
	cfg := serialConfig(msg.RCProtocolSBUS)
	cfg.Failsafe.TimeoutMs = 1000
	r, tx := serialRig(t, cfg, &rctx.SerialOptions{SBUSFailsafeAfter: 100 * time.Millisecond})
	if err := tx.Set(1, 2000); err != nil {
		t.Fatal(err)
	}
	r.run(100 * time.Millisecond)
	tx.SetLinkLost(true)
	r.run(300 * time.Millisecond)
	s := r.status()
	if !s.Failsafe || s.FailsafeReason != "receiver failsafe" || !s.Connected {
		t.Fatalf("status %+v, want failsafe from the receiver while connected", s)
	}
	if s.FramesLost == 0 {
		t.Error("no frame-lost flags counted")
	}
	if s.Channels[0].Normalized != 1 {
		t.Errorf("channel 1 %v, want the last real position 1", s.Channels[0].Normalized)
	}
}

// TestEdgeProtocols reads PPM and PWM from simulated pins.
func TestEdgeProtocols(t *testing.T) {
	t.Run("ppm", func(t *testing.T) {
		ex := executor.NewVirtual()
		pin := gpiotest.NewPin(18, ex.Clock())
		cfg := DefaultConfig()
		cfg.Protocol = msg.RCProtocolPPM
		r := newRigOn(t, ex, cfg, Options{Pins: pins(pin)})
		tx, err := rctx.NewPPM(ex, pin, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tx.Close)
		if err := tx.SetAll(1250, 1500, 2000, 1000); err != nil {
			t.Fatal(err)
		}
		r.run(500 * time.Millisecond)
		st := r.last()
		if st.Protocol != "ppm" || !near(float64(st.Channels[0].Normalized), -0.5, 0.01) || st.Channels[2].Normalized != 1 || st.Channels[0].RawValue != 1250 {
			t.Fatalf("state %+v", st)
		}
		if !near(float64(st.FrameRateHz), float64(time.Second)/float64(wire.PPMPeriod), 1) {
			t.Errorf("frame rate %d", st.FrameRateHz)
		}
	})
	t.Run("pwm", func(t *testing.T) {
		ex := executor.NewVirtual()
		var ps []*gpiotest.Pin
		var lines []rctx.Line
		for _, n := range []int{12, 13, 19, 26} {
			p := gpiotest.NewPin(n, ex.Clock())
			ps = append(ps, p)
			lines = append(lines, p)
		}
		cfg := DefaultConfig()
		cfg.Protocol = msg.RCProtocolPWM
		r := newRigOn(t, ex, cfg, Options{Pins: pins(ps...)})
		tx, err := rctx.NewPWM(ex, lines, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tx.Close)
		if err := tx.SetAll(1500, 1000, 2000, 1750); err != nil {
			t.Fatal(err)
		}
		r.run(500 * time.Millisecond)
		st := r.last()
		want := []float32{0, -1, 1, 0.5}
		for i, w := range want {
			if !near(float64(st.Channels[i].Normalized), float64(w), 0.01) {
				t.Errorf("channel %d %v, want %v", i+1, st.Channels[i].Normalized, w)
			}
		}
	})
}

// pins opens the given fake pins by BCM number.
func pins(ps ...*gpiotest.Pin) PinOpener {
	return func(bcm int) (gpio.EdgeWatcher, func() error, error) {
		for _, p := range ps {
			if p.Number() == bcm {
				return p, nil, p.In(gpio.Float, gpio.BothEdges)
			}
		}
		return nil, nil, errNoPin(bcm)
	}
}

type errNoPin int

func (e errNoPin) Error() string { return "no such pin" }

// TestCalibrate moves a stick through its travel during the window and
// lets it rest off-centre: min, max and centre come from what was seen.
func TestCalibrate(t *testing.T) {
	r, tx := serialRig(t, serialConfig(msg.RCProtocolIBUS), nil)
	r.run(50 * time.Millisecond)
	var got Channel
	var gotErr error
	finished := false
	r.do(func() {
		r.rx.Calibrate(2, time.Second, func(c Channel, err error) { got, gotErr, finished = c, err, true })
	})
	for _, us := range []uint16{1400, 1100, 1020, 1300, 1700, 1980, 1800, 1530} {
		if err := tx.Set(2, us); err != nil {
			t.Fatal(err)
		}
		r.run(100 * time.Millisecond)
	}
	r.run(300 * time.Millisecond)
	if !finished || gotErr != nil {
		t.Fatalf("calibration finished %v err %v", finished, gotErr)
	}
	if got.Min != 1020 || got.Max != 1980 || got.Center != 1530 || got.Name != "throttle" {
		t.Fatalf("calibrated %+v, want 1020/1530/1980 named throttle", got)
	}
	if c := r.rx.Config().Channel(2); c != got {
		t.Fatalf("config channel 2 %+v, want the calibration in force", c)
	}
	// A stick that barely moved is refused.
	r.do(func() {
		r.rx.Calibrate(1, 200*time.Millisecond, func(c Channel, err error) { gotErr, finished = err, true })
	})
	finished = false
	r.run(300 * time.Millisecond)
	if !finished || gotErr == nil {
		t.Fatalf("calibrating a still stick: finished %v err %v, want an error", finished, gotErr)
	}
}

// TestApplyReopens: switching protocol closes the old input and reads the
// new one; disabling stops publishing.
func TestApplyReopens(t *testing.T) {
	r, tx := serialRig(t, serialConfig(msg.RCProtocolSBUS), nil)
	r.run(100 * time.Millisecond)
	if r.last().Protocol != "sbus" {
		t.Fatal("no SBUS state")
	}
	cfg := r.rx.Config()
	cfg.Enabled = false
	r.do(func() {
		if err := r.rx.Apply(cfg); err != nil {
			t.Fatal(err)
		}
	})
	n := len(r.states)
	r.run(time.Second)
	if len(r.states) != n {
		t.Fatalf("%d states published while disabled", len(r.states)-n)
	}
	if s := r.status(); s.Input != "disabled" || s.Connected {
		t.Fatalf("status %+v, want disabled", s)
	}
	cfg.Enabled, cfg.Protocol = true, msg.RCProtocolCRSF
	r.do(func() {
		if err := r.rx.Apply(cfg); err != nil {
			t.Fatal(err)
		}
	})
	r.run(100 * time.Millisecond)
	// The transmitter still speaks SBUS: nothing decodes as CRSF.
	if s := r.status(); s.Connected || s.Input != "open" || s.Protocol != "crsf" {
		t.Fatalf("status %+v, want CRSF open and not connected", s)
	}
	tx.Close()
}

// TestOpenRetries: a device that cannot be opened is retried.
func TestOpenRetries(t *testing.T) {
	ex := executor.NewVirtual()
	_, server := uarttest.Pipe(ex.Clock())
	tries := 0
	open := func(string, uart.Config) (uart.Port, func() error, error) {
		tries++
		if tries < 3 {
			return nil, nil, errNoPin(0)
		}
		return server, nil, nil
	}
	r := newRigOn(t, ex, serialConfig(msg.RCProtocolSBUS), Options{Ports: open, RetryEvery: time.Second})
	if s := r.status(); s.Input == "open" {
		t.Fatal("open on the first try")
	}
	r.run(2500 * time.Millisecond)
	if s := r.status(); s.Input != "open" || tries != 3 {
		t.Fatalf("input %q after %d tries", s.Input, tries)
	}
}

// TestPublishRate: publish_hz limits the state to that rate whatever the
// frame rate; 0 publishes every frame.
func TestPublishRate(t *testing.T) {
	cfg := serialConfig(msg.RCProtocolCRSF)
	cfg.PublishHz = 20
	r, _ := serialRig(t, cfg, nil)
	r.run(time.Second)
	if n := len(r.states); n < 19 || n > 21 {
		t.Fatalf("%d states in 1 s at publish_hz 20 (CRSF sends 250 frames/s)", n)
	}
	if hz := r.last().FrameRateHz; hz != 250 {
		t.Errorf("frame rate %d Hz, want the receiver's 250", hz)
	}
	cfg.PublishHz = 0
	r.do(func() {
		if err := r.rx.Apply(cfg); err != nil {
			t.Fatal(err)
		}
	})
	n := len(r.states)
	r.run(time.Second)
	if got := len(r.states) - n; got < 245 {
		t.Fatalf("%d states in 1 s at publish_hz 0, want one per frame (250)", got)
	}
}

// failingPort is a UART whose reader can stop, as hal/serial's does when
// its device goes away.
type failingPort struct {
	*uarttest.Port
	err error
}

func (p *failingPort) Err() error { return p.err }

// TestPortFailureReopens: a UART whose reader stopped is closed and
// opened again.
func TestPortFailureReopens(t *testing.T) {
	ex := executor.NewVirtual()
	_, server := uarttest.Pipe(ex.Clock())
	var ports []*failingPort
	open := func(string, uart.Config) (uart.Port, func() error, error) {
		p := &failingPort{Port: server}
		ports = append(ports, p)
		return p, nil, nil
	}
	r := newRigOn(t, ex, serialConfig(msg.RCProtocolSBUS), Options{Ports: open})
	r.run(3 * PortCheckEvery)
	if len(ports) != 1 {
		t.Fatalf("%d opens of a healthy port", len(ports))
	}
	ports[0].err = errors.New("read /dev/ttyUSB0: no such device")
	r.run(PortCheckEvery)
	if len(ports) != 2 || r.status().Input != "open" {
		t.Fatalf("%d opens after the port failed, input %q", len(ports), r.status().Input)
	}
}
