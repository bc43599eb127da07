package encoder

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
)

func newDecoder(t testing.TB, o *Options) (*Decoder, *gpiotest.Pin, *gpiotest.Pin) {
	t.Helper()
	a, b := gpiotest.NewPin(17, nil), gpiotest.NewPin(27, nil)
	d, err := New(a, b, o)
	if err != nil {
		t.Fatal(err)
	}
	return d, a, b
}

// The edge script of one forward cycle and one backward, 1 ms apart, as a
// datasheet's timing diagram draws them.
func TestScript(t *testing.T) {
	d, a, b := newDecoder(t, &Options{CountsPerRev: 400, Pull: gpio.PullDown})
	if a.Pull() != gpio.PullDown || a.Edge() != gpio.BothEdges || b.Edge() != gpio.BothEdges {
		t.Fatalf("pins set up as %v/%v, want pull-down inputs on both edges", a.Pull(), a.Edge())
	}
	t0 := clock.Epoch()
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type ev struct {
		pin *gpiotest.Pin
		l   gpio.Level
	}
	forward := []ev{{a, gpio.High}, {b, gpio.High}, {a, gpio.Low}, {b, gpio.Low}}
	for i, e := range forward {
		e.pin.Set(e.l, ms(i+1))
		if got := d.Count(); got != int64(i+1) {
			t.Fatalf("after forward edge %d: count %d", i+1, got)
		}
	}
	if d.Direction() != 1 {
		t.Errorf("direction %d, want 1", d.Direction())
	}
	if v := d.Velocity(ms(4)); math.Abs(v-1000) > 1e-9 {
		t.Errorf("velocity %v counts/s, want 1000", v)
	}
	if r := d.Radians(); math.Abs(r-4*2*math.Pi/400) > 1e-12 {
		t.Errorf("Radians() = %v", r)
	}
	backward := []ev{{b, gpio.High}, {a, gpio.High}, {b, gpio.Low}, {a, gpio.Low}, {b, gpio.High}}
	for i, e := range backward {
		e.pin.Set(e.l, ms(10+2*i))
	}
	if d.Count() != -1 || d.Direction() != -1 || d.Illegal() != 0 {
		t.Errorf("after backward edges: count %d, direction %d, illegal %d; want −1, −1, 0", d.Count(), d.Direction(), d.Illegal())
	}
	// Four backward edges 2 ms apart (the first counted one started the
	// direction): −500 counts/s.
	if v := d.Velocity(ms(18)); math.Abs(v+500) > 1e-9 {
		t.Errorf("velocity %v, want −500", v)
	}
	if v := d.RadiansPerSecond(ms(18)); math.Abs(v+500*2*math.Pi/400) > 1e-9 {
		t.Errorf("RadiansPerSecond = %v", v)
	}
}

func TestVelocityDecaysAndStops(t *testing.T) {
	d, a, b := newDecoder(t, &Options{StopAfter: 50 * time.Millisecond})
	t0 := clock.Epoch()
	a.Set(gpio.High, t0)
	if v := d.Velocity(t0.Add(time.Millisecond)); v != 0 {
		t.Errorf("velocity from one edge = %v, want 0 (no period yet)", v)
	}
	b.Set(gpio.High, t0.Add(time.Millisecond))
	a.Set(gpio.Low, t0.Add(2*time.Millisecond))
	if v := d.Velocity(t0.Add(2 * time.Millisecond)); v != 1000 {
		t.Errorf("velocity %v, want 1000", v)
	}
	// 10 ms after the last edge the speed can be at most 1 count / 10 ms.
	if v := d.Velocity(t0.Add(12 * time.Millisecond)); math.Abs(v-100) > 1e-9 {
		t.Errorf("velocity 10 ms after the last edge = %v, want 100", v)
	}
	if v := d.Velocity(t0.Add(52 * time.Millisecond)); v != 0 {
		t.Errorf("velocity after StopAfter = %v, want 0", v)
	}
}

func TestIllegalAndReset(t *testing.T) {
	d, a, _ := newDecoder(t, nil)
	t0 := clock.Epoch()
	a.Set(gpio.High, t0)
	// A rising again: its falling edge was missed.
	d.Edge(true, gpio.EdgeEvent{Level: gpio.High, Time: t0.Add(time.Millisecond)})
	d.Edge(false, gpio.EdgeEvent{Level: gpio.Low, Time: t0.Add(time.Millisecond)})
	if d.Illegal() != 2 || d.Count() != 1 {
		t.Errorf("illegal %d, count %d; want 2, 1", d.Illegal(), d.Count())
	}
	d.Reset()
	if d.Count() != 0 {
		t.Errorf("count %d after Reset", d.Count())
	}
	d.Close()
	a.Set(gpio.Low, t0.Add(2*time.Millisecond))
	if d.Count() != 0 {
		t.Error("closed decoder still counts")
	}
	if _, err := New(nil, nil, nil); err == nil {
		t.Error("New without pins succeeded")
	}
	if _, err := New(gpiotest.NewPin(1, nil), gpiotest.NewPin(2, nil), &Options{CountsPerRev: -1}); err == nil {
		t.Error("New accepted −1 counts per revolution")
	}
}

// FuzzDecoder feeds arbitrary edge events: the decoder never panics, every
// event is either one count or one illegal transition, and the velocity is
// finite.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0x01, 0x03, 0x00, 0x02})
	f.Add([]byte{0x01, 0x01, 0x01, 0xFF, 0x80})
	f.Fuzz(func(t *testing.T, script []byte) {
		d, _, _ := newDecoder(t, nil)
		now := clock.Epoch()
		var moves int64
		for _, s := range script {
			// bit 0: level, bit 1: pin, bits 2–7: µs to the next event
			now = now.Add(time.Duration(s>>2) * time.Microsecond)
			before := d.Count()
			d.Edge(s&2 == 0, gpio.EdgeEvent{Level: gpio.Level(s&1 == 1), Time: now})
			moves += abs(d.Count() - before)
			if v := d.Velocity(now); math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("velocity %v", v)
			}
		}
		if moves+int64(d.Illegal()) != int64(len(script)) {
			t.Fatalf("%d events gave %d counts and %d illegal", len(script), moves, d.Illegal())
		}
	})
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func BenchmarkEdge(b *testing.B) {
	d, _, _ := newDecoder(b, nil)
	t := clock.Epoch()
	seq := []struct {
		onA bool
		l   gpio.Level
	}{{true, gpio.High}, {false, gpio.High}, {true, gpio.Low}, {false, gpio.Low}}
	i := 0
	for b.Loop() {
		s := seq[i%4]
		t = t.Add(time.Microsecond)
		d.Edge(s.onA, gpio.EdgeEvent{Level: s.l, Time: t})
		i++
	}
}
