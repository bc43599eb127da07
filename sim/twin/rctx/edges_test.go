package rctx

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	simboard "github.com/saint-os/saint/sim/board"
)

const us = time.Microsecond

func runFor(t *testing.T, ex *executor.Executor, d time.Duration) {
	t.Helper()
	if err := ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// TestPPMOnPin drives a PPM signal on a fake pin watched for both edges and
// decodes it: the sticks come back every 22.5 ms, and every edge is where
// the channel widths put it.
func TestPPMOnPin(t *testing.T) {
	ex := executor.NewVirtual()
	pin := gpiotest.NewPin(18, ex.Clock())
	if err := pin.In(gpio.Float, gpio.BothEdges); err != nil {
		t.Fatal(err)
	}
	var frames []rc.Frame
	dec := rc.NewPPMDecoder(nil, func(f rc.Frame) { frames = append(frames, f) })
	var edges []gpio.EdgeEvent
	pin.WatchEdges(func(e gpio.EdgeEvent) {
		edges = append(edges, e)
		dec.Edge(e)
	})
	tx, err := NewPPM(ex, pin, nil)
	if err != nil {
		t.Fatal(err)
	}
	sticks := []uint16{1000, 2000, 1500, 1250, 1750, 1100, 1900, 1500}
	if err := tx.SetAll(sticks...); err != nil {
		t.Fatal(err)
	}
	start := ex.Now()
	runFor(t, ex, time.Second)
	sent := int(time.Second / rc.PPMPeriod) // 44 frames started
	if int(tx.Frames()) != sent {
		t.Fatalf("sent %d frames, want %d", tx.Frames(), sent)
	}
	// The decoder needs a sync before the first frame and delivers each at
	// the next one's start: the first and the last are not delivered.
	if len(frames) != sent-2 {
		t.Fatalf("decoded %d frames, want %d (stats %+v)", len(frames), sent-2, dec.Stats())
	}
	for i, f := range frames {
		if !slices.Equal(f.Channels(), sticks) {
			t.Fatalf("frame %d = %v, want %v", i, f.Channels(), sticks)
		}
		if i > 0 && f.Interval != rc.PPMPeriod {
			t.Fatalf("frame %d interval %v, want %v", i, f.Interval, rc.PPMPeriod)
		}
	}
	// The first frame's edges, exactly.
	f0 := start.Add(rc.PPMPeriod)
	offs := []time.Duration{0, 1000, 3000, 4500, 5750, 7500, 8600, 10500, 12000}
	for i, off := range offs {
		rise, fall := edges[2*i], edges[2*i+1]
		if rise.Level != gpio.High || !rise.Time.Equal(f0.Add(off*us)) || fall.Level != gpio.Low || !fall.Time.Equal(f0.Add(off*us+rc.PPMDefaultPulse)) {
			t.Fatalf("pulse %d = %v, %v; want rise at +%v µs, fall %v later", i, rise, fall, off, rc.PPMDefaultPulse)
		}
	}

	// Link loss: the line goes quiet.
	tx.SetLinkLost(true)
	lost := ex.Now()
	n := len(edges)
	runFor(t, ex, 200*time.Millisecond)
	for _, e := range edges[n:] {
		// The frame in flight finishes; nothing after it.
		if e.Time.Sub(lost) >= rc.PPMPeriod {
			t.Fatalf("edge %v at +%v after the link was lost", e.Level, e.Time.Sub(lost))
		}
	}
	tx.SetLinkLost(false)
	got := len(frames)
	runFor(t, ex, 100*time.Millisecond)
	if len(frames) <= got {
		t.Error("no frames after the link came back")
	}
	tx.Close()
	n = len(edges)
	runFor(t, ex, 100*time.Millisecond)
	if len(edges) > n+1 || pin.Read() != gpio.Low {
		t.Errorf("after Close: %d more edges, line %v", len(edges)-n, pin.Read())
	}
}

// TestPPMOnSimBoard drives the simulated Pi's GPIO18 through SetInput and
// decodes the edges a driver watching the pin sees.
func TestPPMOnSimBoard(t *testing.T) {
	ex := executor.NewVirtual()
	b, err := simboard.New(&simboard.Options{Clock: ex.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(18, board.DirInput, "rc_ppm"); err != nil {
		t.Fatal(err)
	}
	io, err := b.Hardware().GPIO(18)
	if err != nil {
		t.Fatal(err)
	}
	if err := io.In(gpio.PullDown, gpio.RisingEdge); err != nil {
		t.Fatal(err)
	}
	var frames []rc.Frame
	dec := rc.NewPPMDecoder(nil, func(f rc.Frame) { frames = append(frames, f) })
	io.(gpio.EdgeWatcher).WatchEdges(dec.Edge)
	line, err := BoardLine(b, 18)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := NewPPM(ex, line, &PPMOptions{Channels: 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.SetNormalized(3, 0.5); err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, 100*time.Millisecond)
	if len(frames) < 2 {
		t.Fatalf("decoded %d frames (stats %+v)", len(frames), dec.Stats())
	}
	want := []uint16{1500, 1500, 1750, 1500, 1500, 1500}
	for _, f := range frames {
		if !slices.Equal(f.Channels(), want) {
			t.Fatalf("frame = %v, want %v", f.Channels(), want)
		}
	}
	if _, err := BoardLine(b, 99); err == nil {
		t.Error("BoardLine accepted GPIO99")
	}
}

// TestPPMInverted checks a negative PPM signal: idle high, low pulses.
func TestPPMInverted(t *testing.T) {
	ex := executor.NewVirtual()
	pin := gpiotest.NewPin(18, ex.Clock())
	if err := pin.In(gpio.Float, gpio.BothEdges); err != nil {
		t.Fatal(err)
	}
	sig := rc.PPMOptions{Inverted: true, Pulse: 300 * us, Period: 20 * time.Millisecond}
	var frames []rc.Frame
	dec := rc.NewPPMDecoder(&sig, func(f rc.Frame) { frames = append(frames, f) })
	pin.WatchEdges(dec.Edge)
	tx, err := NewPPM(ex, pin, &PPMOptions{Channels: 4, Signal: sig})
	if err != nil {
		t.Fatal(err)
	}
	if pin.Read() != gpio.High {
		t.Error("inverted PPM line does not idle high")
	}
	if err := tx.SetAll(1200, 1300, 1400, 1600); err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, 200*time.Millisecond)
	if len(frames) != 8 {
		t.Fatalf("decoded %d frames, want 8", len(frames))
	}
	if f := frames[len(frames)-1]; !slices.Equal(f.Channels(), []uint16{1200, 1300, 1400, 1600}) || f.Interval != 20*time.Millisecond {
		t.Errorf("frame = %v every %v", f.Channels(), f.Interval)
	}
	for _, o := range []*PPMOptions{{Channels: 3}, {Channels: 17}, {Signal: rc.PPMOptions{Pulse: -1}}} {
		if _, err := NewPPM(ex, pin, o); err == nil {
			t.Errorf("NewPPM(%+v) succeeded", o)
		}
	}
}

// TestPWMOnPins drives four servo outputs and decodes them: each pulse is
// exactly the stick's width, 50 times a second.
func TestPWMOnPins(t *testing.T) {
	ex := executor.NewVirtual()
	var pins []*gpiotest.Pin
	var lines []Line
	var frames []rc.Frame
	dec, err := rc.NewPWMDecoder(4, 0, func(f rc.Frame) { frames = append(frames, f) })
	if err != nil {
		t.Fatal(err)
	}
	for i, bcm := range []int{12, 13, 19, 26} {
		p := gpiotest.NewPin(bcm, ex.Clock())
		if err := p.In(gpio.PullDown, gpio.BothEdges); err != nil {
			t.Fatal(err)
		}
		p.WatchEdges(func(e gpio.EdgeEvent) { dec.Edge(i, e) })
		pins = append(pins, p)
		lines = append(lines, p)
	}
	var widths []time.Duration
	var rise time.Time
	pins[2].WatchEdges(func(e gpio.EdgeEvent) {
		if e.Level == gpio.High {
			rise = e.Time
		} else {
			widths = append(widths, e.Time.Sub(rise))
		}
	})
	tx, err := NewPWM(ex, lines, nil)
	if err != nil {
		t.Fatal(err)
	}
	sticks := []uint16{1000, 1500, 2000, 1234}
	if err := tx.SetAll(sticks...); err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, time.Second+10*time.Millisecond) // the 50th frame's pulses end
	if len(frames) != 50 || tx.Frames() != 50 {
		t.Fatalf("%d frames decoded, %d sent; want 50", len(frames), tx.Frames())
	}
	for i, f := range frames[1:] {
		if !slices.Equal(f.Channels(), sticks) || f.Interval != rc.PWMPeriod {
			t.Fatalf("frame %d = %v every %v", i+1, f.Channels(), f.Interval)
		}
	}
	for _, w := range widths {
		if w != 2000*us {
			t.Fatalf("channel 3 pulse %v, want exactly 2ms", w)
		}
	}
	tx.SetLinkLost(true)
	runFor(t, ex, 200*time.Millisecond)
	if len(frames) != 50 {
		t.Errorf("%d frames after the link was lost", len(frames)-50)
	}
	if _, err := NewPWM(ex, nil, nil); err == nil {
		t.Error("NewPWM accepted no lines")
	}
	if _, err := NewPWM(ex, lines, &PWMOptions{Period: 2 * time.Millisecond}); err == nil {
		t.Error("NewPWM accepted a period shorter than a pulse")
	}
}
