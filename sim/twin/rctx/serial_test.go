package rctx

import (
	"context"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
	simboard "github.com/saint-os/saint/sim/board"
)

// rig is a transmitter on one end of a simulated UART and a decoder on the
// other, as the server would read it.
type rig struct {
	ex     *executor.Executor
	tx     *Serial
	rx     rc.ByteDecoder
	frames []rc.Frame
	device *uarttest.Port // the receiver's end, which the twin writes
}

func newRig(t *testing.T, p rc.Protocol, o *SerialOptions) *rig {
	t.Helper()
	r := &rig{ex: executor.NewVirtual()}
	device, server := uarttest.Pipe(r.ex.Clock())
	r.device = device
	var err error
	r.rx, err = rc.NewByteDecoder(p, func(f rc.Frame) { r.frames = append(r.frames, f) })
	if err != nil {
		t.Fatal(err)
	}
	stop := server.Receive(r.rx.Feed)
	t.Cleanup(stop)
	r.tx, err = NewSerial(r.ex, device, p, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.tx.Close)
	return r
}

func (r *rig) run(t *testing.T, d time.Duration) {
	t.Helper()
	if err := r.ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// TestSerialSticksRoundTrip sets sticks, runs one virtual second and decodes
// what came out of the wire: every frame, at the protocol's rate, with the
// sticks' values.
func TestSerialSticksRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		p      rc.Protocol
		period time.Duration
		n      int
	}{
		{rc.SBUS, 14 * time.Millisecond, 16},
		{rc.IBUS, 7 * time.Millisecond, 14},
		{rc.CRSF, 4 * time.Millisecond, 16},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			r := newRig(t, tc.p, nil)
			if got := r.tx.Channels(); got != tc.n {
				t.Fatalf("Channels() = %d, want %d", got, tc.n)
			}
			sticks := []uint16{1000, 2000, 1500, 1234, 988, 2012, 1777, 900, 2100, 1111, 1999, 1001, 1500, 1600, 1400, 1300}[:tc.n]
			if err := r.tx.SetAll(sticks...); err != nil {
				t.Fatal(err)
			}
			start := r.ex.Now()
			r.run(t, time.Second)
			if want := int(time.Second / tc.period); len(r.frames) != want {
				t.Fatalf("%d frames in 1 s, want %d", len(r.frames), want)
			}
			if r.tx.Frames() != uint64(len(r.frames)) {
				t.Errorf("sent %d frames, decoded %d", r.tx.Frames(), len(r.frames))
			}
			for i, f := range r.frames {
				if got := f.Channels(); len(got) != tc.n || !equal(got, sticks) {
					t.Fatalf("frame %d channels = %v, want %v", i, got, sticks)
				}
				if want := start.Add(time.Duration(i+1) * tc.period); !f.Time.Equal(want) {
					t.Fatalf("frame %d at %v, want %v", i, f.Time.Sub(start), want.Sub(start))
				}
				if i > 0 && f.Interval != tc.period {
					t.Fatalf("frame %d interval %v, want %v", i, f.Interval, tc.period)
				}
			}
			if st := r.rx.Stats(); st.BadFrames != 0 || st.Discarded != 0 {
				t.Errorf("decoder stats %+v on a clean line", st)
			}
			if want, _ := rc.PortConfig(tc.p); r.device.Config() != want {
				t.Errorf("device end configured %+v, want %+v", r.device.Config(), want)
			}
		})
	}
}

func equal(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSerialMovesSticks changes a stick between frames: the next frame
// carries it.
func TestSerialMovesSticks(t *testing.T) {
	r := newRig(t, rc.CRSF, nil)
	r.run(t, 10*time.Millisecond) // two frames centred
	if err := r.tx.SetNormalized(2, -1); err != nil {
		t.Fatal(err)
	}
	if err := r.tx.SetSwitch(5, true); err != nil {
		t.Fatal(err)
	}
	r.run(t, 4*time.Millisecond)
	if len(r.frames) != 3 {
		t.Fatalf("%d frames, want 3", len(r.frames))
	}
	if got := r.frames[1].Micros; got[1] != 1500 || got[4] != 1500 {
		t.Errorf("before the move: %v", got)
	}
	if got := r.frames[2].Micros; got[1] != 1000 || got[4] != 2000 || got[0] != 1500 {
		t.Errorf("after the move: %v", got)
	}
	for _, bad := range []func() error{
		func() error { return r.tx.Set(0, 1500) },
		func() error { return r.tx.Set(17, 1500) },
		func() error { return r.tx.Set(1, 500) },
		func() error { return r.tx.Set(1, 2500) },
	} {
		if bad() == nil {
			t.Error("an out-of-range Set succeeded")
		}
	}
	// CRSF carries 881–2159 µs: an extended-limits stick is clamped there.
	if err := r.tx.SetAll(800, 2200); err != nil {
		t.Fatal(err)
	}
	r.run(t, 4*time.Millisecond)
	if got := r.frames[3].Micros; got[0] != 881 || got[1] != 2159 {
		t.Errorf("extended limits: %v, want 881 and 2159", got[:2])
	}
}

// TestSerialLinkLoss cuts the link: no frame is written until it returns.
func TestSerialLinkLoss(t *testing.T) {
	for _, p := range []rc.Protocol{rc.SBUS, rc.IBUS, rc.CRSF} {
		t.Run(string(p), func(t *testing.T) {
			r := newRig(t, p, nil)
			r.run(t, 100*time.Millisecond)
			before := len(r.frames)
			written := len(r.device.Writes())
			if before == 0 {
				t.Fatal("no frames before the link was cut")
			}
			r.tx.SetLinkLost(true)
			r.run(t, 500*time.Millisecond)
			if len(r.frames) != before {
				t.Errorf("%d frames while the link was lost", len(r.frames)-before)
			}
			if got := len(r.device.Writes()); got != written {
				t.Errorf("%d writes while the link was lost", got-written)
			}
			r.tx.SetLinkLost(false)
			r.run(t, 100*time.Millisecond)
			if len(r.frames) == before {
				t.Error("no frames after the link came back")
			}
			if back := r.frames[before]; back.Interval < 500*time.Millisecond {
				t.Errorf("first frame after the loss has interval %v, want the gap", back.Interval)
			}
		})
	}
}

// TestSerialSBUSFlags raises SBUS's frame-lost, then failsafe flags.
func TestSerialSBUSFlags(t *testing.T) {
	r := newRig(t, rc.SBUS, &SerialOptions{Period: rc.SBUSFastPeriod})
	r.run(t, 7*time.Millisecond)
	r.tx.SetFlags(true, false)
	r.run(t, 7*time.Millisecond)
	r.tx.SetFlags(true, true)
	r.run(t, 7*time.Millisecond)
	if len(r.frames) != 3 {
		t.Fatalf("%d frames, want 3", len(r.frames))
	}
	for i, want := range [][2]bool{{false, false}, {true, false}, {true, true}} {
		if f := r.frames[i]; f.FrameLost != want[0] || f.Failsafe != want[1] {
			t.Errorf("frame %d: frame lost %v failsafe %v, want %v", i, f.FrameLost, f.Failsafe, want)
		}
	}
}

// TestSerialSBUSFailsafeOnLoss checks the receiver-like loss behaviour:
// frames keep coming with frame lost, then failsafe, holding the sticks; and
// clear when the link returns.
func TestSerialSBUSFailsafeOnLoss(t *testing.T) {
	r := newRig(t, rc.SBUS, &SerialOptions{Period: 10 * time.Millisecond, SBUSFailsafeAfter: 100 * time.Millisecond})
	if err := r.tx.Set(1, 1200); err != nil {
		t.Fatal(err)
	}
	r.run(t, 50*time.Millisecond) // frames 1–5: link up
	r.tx.SetLinkLost(true)
	r.run(t, 200*time.Millisecond) // frames 6–25: lost at 60 ms, failsafe from 160 ms
	r.tx.SetLinkLost(false)
	r.run(t, 20*time.Millisecond) // frames 26–27: back
	if len(r.frames) != 27 {
		t.Fatalf("%d frames, want 27: the receiver keeps sending", len(r.frames))
	}
	for i, f := range r.frames {
		at := f.Time.Sub(r.frames[0].Time) + 10*time.Millisecond
		lost := at > 50*time.Millisecond && at <= 250*time.Millisecond
		failsafe := lost && at >= 160*time.Millisecond
		if f.FrameLost != lost || f.Failsafe != failsafe || f.Micros[0] != 1200 {
			t.Errorf("frame %d at %v: lost %v failsafe %v ch1 %d; want %v %v 1200", i+1, at, f.FrameLost, f.Failsafe, f.Micros[0], lost, failsafe)
		}
	}
}

// TestSerialCRSFLinkStats sets RSSI and link quality and reads them back
// from the decoded link statistics, sent at the configured rate.
func TestSerialCRSFLinkStats(t *testing.T) {
	r := newRig(t, rc.CRSF, &SerialOptions{LinkStatsEvery: 10, CRSFAddress: rc.CRSFAddrTxModule})
	if err := r.tx.SetLink(-87, 63); err != nil {
		t.Fatal(err)
	}
	r.run(t, 400*time.Millisecond) // 100 channel frames
	if len(r.frames) != 100 {
		t.Fatalf("%d frames, want 100", len(r.frames))
	}
	for i, f := range r.frames {
		if !f.HasLink || f.Link.RSSIdBm() != -87 || f.Link.UplinkLQ != 63 {
			t.Fatalf("frame %d link = %v %+v, want -87 dBm, LQ 63", i, f.HasLink, f.Link)
		}
	}
	if st := r.rx.Stats(); st.Telemetry != 10 {
		t.Errorf("%d link statistics frames for 100 channel frames, want 10", st.Telemetry)
	}
	if got := r.device.Written()[0]; got != rc.CRSFAddrTxModule {
		t.Errorf("address byte %#02x, want 0xee", got)
	}
	for _, bad := range [][2]int{{1, 50}, {-300, 50}, {-50, 101}, {-50, -1}} {
		if r.tx.SetLink(bad[0], bad[1]) == nil {
			t.Errorf("SetLink(%d, %d) succeeded", bad[0], bad[1])
		}
	}
}

// TestSerialNoise puts random bytes between frames: the decoder skips them
// and still gets every frame.
func TestSerialNoise(t *testing.T) {
	for _, p := range []rc.Protocol{rc.SBUS, rc.IBUS, rc.CRSF} {
		t.Run(string(p), func(t *testing.T) {
			r := newRig(t, p, nil)
			if err := r.tx.SetNoise(12, 42); err != nil {
				t.Fatal(err)
			}
			if err := r.tx.SetAll(1100, 1900, 1300); err != nil {
				t.Fatal(err)
			}
			r.run(t, time.Second)
			if uint64(len(r.frames)) != r.tx.Frames() {
				t.Fatalf("decoded %d of %d frames through the noise (stats %+v)", len(r.frames), r.tx.Frames(), r.rx.Stats())
			}
			for _, f := range r.frames {
				if f.Micros[0] != 1100 || f.Micros[1] != 1900 || f.Micros[2] != 1300 {
					t.Fatalf("frame through noise = %v", f.Channels())
				}
			}
			if st := r.rx.Stats(); st.Discarded == 0 {
				t.Errorf("no noise reached the decoder: %+v", st)
			}
			if err := r.tx.InjectNoise([]byte{0x0F, 0x20, 0xC8}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNewSerialRejects(t *testing.T) {
	ex := executor.NewVirtual()
	port := uarttest.NewPort(ex.Clock())
	if _, err := NewSerial(ex, port, rc.PPM, nil); err == nil {
		t.Error("NewSerial accepted PPM")
	}
	if _, err := NewSerial(ex, port, rc.SBUS, &SerialOptions{Period: -time.Millisecond}); err == nil {
		t.Error("NewSerial accepted a negative period")
	}
	s, err := NewSerial(ex, port, rc.SBUS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := rc.PortConfig(rc.SBUS); port.Config() != want {
		t.Errorf("port configured %+v, want %+v", port.Config(), want)
	}
	s.Close()
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(port.Writes()); n != 0 {
		t.Errorf("%d writes after Close", n)
	}
}

// TestSerialOnSimBoard wires the transmitter to a simulated Pi's ttyAMA0, as
// a receiver on GPIO15 would be, and reads it through the board's UART.
func TestSerialOnSimBoard(t *testing.T) {
	ex := executor.NewVirtual()
	b, err := simboard.New(&simboard.Options{Clock: ex.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	peer, err := b.UARTPeer(simboard.UART)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := b.Hardware().UART(simboard.UART)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := rc.PortConfig(rc.SBUS)
	if err := pi.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	var frames []rc.Frame
	dec := rc.NewSBUSDecoder(func(f rc.Frame) { frames = append(frames, f) })
	defer pi.Receive(dec.Feed)()
	tx, err := NewSerial(ex, peer, rc.SBUS, &SerialOptions{Period: rc.SBUSFastPeriod})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.Set(3, 1100); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), 70*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if len(frames) != 10 {
		t.Fatalf("%d frames in 70 ms at 7 ms, want 10", len(frames))
	}
	if got := frames[9].Micros[2]; got != 1100 {
		t.Errorf("channel 3 = %d µs, want 1100", got)
	}
}
