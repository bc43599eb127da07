package encoder_test

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	drv "github.com/saint-os/saint/hal/device/encoder"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/twin/encoder"
)

func rig(t testing.TB, cpr int) (*encoder.Encoder, *drv.Decoder) {
	t.Helper()
	a, b := gpiotest.NewPin(17, nil), gpiotest.NewPin(27, nil)
	d, err := drv.New(a, b, &drv.Options{CountsPerRev: cpr})
	if err != nil {
		t.Fatal(err)
	}
	return encoder.New(a, b, encoder.Options{CountsPerRev: cpr}), d
}

// A wheel at constant speed, reversing, on a 1 kHz physics step: the
// decoder's count follows the twin's exactly and its velocity matches the
// shaft's.
func TestDecoderFollowsShaft(t *testing.T) {
	const cpr = 2000
	enc, d := rig(t, cpr)
	t0 := clock.Epoch()
	const omega = 7.3 // rad/s
	step := time.Millisecond
	now := t0
	angle := 0.0
	for i := 1; i <= 1000; i++ {
		now = t0.Add(time.Duration(i) * step)
		angle = omega * float64(i) * step.Seconds()
		enc.SetAngle(angle, now)
	}
	wantCount := int64(math.Floor(angle / (2 * math.Pi) * cpr))
	if d.Count() != wantCount || enc.Count() != wantCount {
		t.Errorf("count decoder %d twin %d, want %d", d.Count(), enc.Count(), wantCount)
	}
	const tol = 1e-4 // edges stamped at their crossing times (to the ns)
	if w := d.RadiansPerSecond(now); math.Abs(w-omega)/omega > tol {
		t.Errorf("decoded speed %v rad/s, want %v", w, omega)
	}
	// Back the other way, past zero.
	for i := 1; i <= 1500; i++ {
		enc.SetAngle(angle-omega*float64(i)*step.Seconds(), now.Add(time.Duration(i)*step))
	}
	end := now.Add(1500 * step)
	if d.Count() != enc.Count() || enc.Count() >= 0 {
		t.Errorf("after reversing: decoder %d, twin %d", d.Count(), enc.Count())
	}
	if w := d.RadiansPerSecond(end); math.Abs(w+omega)/omega > tol {
		t.Errorf("decoded speed %v rad/s, want %v", w, -omega)
	}
	if d.Illegal() != 0 {
		t.Errorf("%d illegal transitions from a well-behaved shaft", d.Illegal())
	}
}

// Edges come out in quadrature order, A leading B when the angle grows,
// at evenly spread times.
func TestEdgeOrder(t *testing.T) {
	a, b := gpiotest.NewPin(1, nil), gpiotest.NewPin(2, nil)
	type rec struct {
		pin string
		ev  gpio.EdgeEvent
	}
	var got []rec
	for name, p := range map[string]*gpiotest.Pin{"A": a, "B": b} {
		_ = p.In(gpio.PullNoChange, gpio.BothEdges)
		p.WatchEdges(func(e gpio.EdgeEvent) { got = append(got, rec{name, e}) })
	}
	enc := encoder.New(a, b, encoder.Options{CountsPerRev: 8})
	t0 := clock.Epoch()
	enc.SetAngle(0, t0)
	// Four and a half counts in 4.5 ms: an edge every millisecond.
	enc.SetAngle(2*math.Pi*4.5/8, t0.Add(4500*time.Microsecond))
	want := []rec{
		{"A", gpio.EdgeEvent{Level: gpio.High, Time: t0.Add(1 * time.Millisecond)}},
		{"B", gpio.EdgeEvent{Level: gpio.High, Time: t0.Add(2 * time.Millisecond)}},
		{"A", gpio.EdgeEvent{Level: gpio.Low, Time: t0.Add(3 * time.Millisecond)}},
		{"B", gpio.EdgeEvent{Level: gpio.Low, Time: t0.Add(4 * time.Millisecond)}},
	}
	if len(got) != len(want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
	for i := range want {
		if got[i].pin != want[i].pin || got[i].ev.Level != want[i].ev.Level || !got[i].ev.Time.Equal(want[i].ev.Time) {
			t.Errorf("edge %d = %v, want %v", i, got[i], want[i])
		}
	}
	// Reversed wiring: B leads.
	got = nil
	a2, b2 := gpiotest.NewPin(3, nil), gpiotest.NewPin(4, nil)
	for name, p := range map[string]*gpiotest.Pin{"A": a2, "B": b2} {
		_ = p.In(gpio.PullNoChange, gpio.BothEdges)
		p.WatchEdges(func(e gpio.EdgeEvent) { got = append(got, rec{name, e}) })
	}
	rev := encoder.New(a2, b2, encoder.Options{CountsPerRev: 8, Reverse: true})
	rev.SetAngle(2*math.Pi/8+1e-9, t0)
	if len(got) != 1 || got[0].pin != "B" {
		t.Errorf("reversed encoder's first edge %v, want B", got)
	}
}

// On the simulated tracks board (left encoder on GPIO17/27) the edges go
// through the board's pins to a decoder opened from its Hardware.
func TestOnBoard(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	bd, err := simboard.New(&simboard.Options{Profile: simboard.Tracks, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := bd.Hardware().GPIO(17)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := bd.Hardware().GPIO(27)
	d, err := drv.New(pa.(drv.Pin), pb.(drv.Pin), &drv.Options{CountsPerRev: 1024})
	if err != nil {
		t.Fatal(err)
	}
	enc := encoder.New(encoder.BoardLine(bd, 17), encoder.BoardLine(bd, 27), encoder.Options{CountsPerRev: 1024})
	for i := 1; i <= 200; i++ {
		clk.Advance(time.Millisecond)
		enc.SetAngle(-3*float64(i)/1000, clk.Now()) // −3 rad/s: about half a count per step
	}
	if d.Count() != enc.Count() || d.Illegal() != 0 {
		t.Errorf("decoder %d (illegal %d), twin %d", d.Count(), d.Illegal(), enc.Count())
	}
	if w := d.RadiansPerSecond(clk.Now()); math.Abs(w+3)/3 > 0.1 {
		t.Errorf("speed %v rad/s through the board, want −3 within 10 %%", w)
	}
}

func TestTooFastJumps(t *testing.T) {
	enc, d := rig(t, 4096)
	enc.SetAngle(1e6, clock.Epoch()) // far more than MaxEdgesPerUpdate counts at once
	if enc.Edges() != 1 {
		t.Errorf("%d edge steps for a jump, want 1", enc.Edges())
	}
	if d.Count() == enc.Count() {
		t.Error("decoder kept up with a jump no decoder could follow")
	}
	enc.SetAngle(math.NaN(), clock.Epoch())
	enc.SetAngle(math.Inf(-1), clock.Epoch())
}

// FuzzShaft moves the shaft through arbitrary angles: nothing panics, and
// while no update jumps, the decoder counts exactly what the twin did.
func FuzzShaft(f *testing.F) {
	f.Add([]byte{10, 250, 3, 0, 128})
	f.Add([]byte{255, 255, 0, 0})
	f.Fuzz(func(t *testing.T, moves []byte) {
		enc, d := rig(t, 400)
		now := clock.Epoch()
		angle := 0.0
		for _, m := range moves {
			now = now.Add(time.Millisecond)
			angle += (float64(m) - 128) / 40
			enc.SetAngle(angle, now)
		}
		if d.Count() != enc.Count() || d.Illegal() != 0 {
			t.Fatalf("decoder %d (illegal %d), twin %d", d.Count(), d.Illegal(), enc.Count())
		}
	})
}

func BenchmarkSetAngle1000Edges(b *testing.B) {
	enc, _ := rig(b, 4000)
	now := clock.Epoch()
	angle := 0.0
	for b.Loop() {
		now = now.Add(time.Millisecond)
		angle += 2 * math.Pi / 4 // 1000 counts
		enc.SetAngle(angle, now)
	}
}
