package twin

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
)

func TestSpecificForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Motion
		want [3]float64
	}{
		{"flat, zero quaternion", Motion{}, [3]float64{0, 0, StandardGravity}},
		{"flat, accelerating forward", Motion{Orientation: [4]float64{1, 0, 0, 0}, LinearAccel: [3]float64{2, 0, 0}}, [3]float64{2, 0, StandardGravity}},
		// Rolled 90° about x: world up is the sensor's +y.
		{"rolled 90°", Motion{Orientation: [4]float64{math.Cos(math.Pi / 4), math.Sin(math.Pi / 4), 0, 0}}, [3]float64{0, StandardGravity, 0}},
		// Yawed 90°: world x is the sensor's -y.
		{"yawed 90°, accelerating along world x", Motion{Orientation: [4]float64{math.Cos(math.Pi / 4), 0, 0, math.Sin(math.Pi / 4)}, LinearAccel: [3]float64{1, 0, 0}}, [3]float64{0, -1, StandardGravity}},
		{"free fall", Motion{Orientation: [4]float64{2, 0, 0, 0}, LinearAccel: [3]float64{0, 0, -StandardGravity}}, [3]float64{}},
		{"NaN quaternion", Motion{Orientation: [4]float64{math.NaN(), 0, 0, 0}}, [3]float64{0, 0, StandardGravity}},
	} {
		got := tc.m.SpecificForce()
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestNoiseSeeded(t *testing.T) {
	cfg := IMUNoise{AccelRMS: 0.1, GyroRMS: 0.01, AccelBias: [3]float64{1, 0, 0}}
	a, b := NewNoise(3, cfg), NewNoise(3, cfg)
	var sum float64
	const n = 2000
	for i := 0; i < n; i++ {
		x1, _, _ := a.Apply([3]float64{}, [3]float64{}, 0)
		x2, _, _ := b.Apply([3]float64{}, [3]float64{}, 0)
		if x1 != x2 {
			t.Fatal("same seed, different noise")
		}
		sum += x1[0]
	}
	if mean := sum / n; math.Abs(mean-1) > 0.02 {
		t.Errorf("mean x = %v, want the bias 1 within 0.02", mean)
	}
	ab, gb := SeededBias(9, 0.5, 0.1)
	for i := 0; i < 3; i++ {
		if math.Abs(ab[i]) > 0.5 || math.Abs(gb[i]) > 0.1 {
			t.Errorf("bias %v %v beyond its bounds", ab, gb)
		}
	}
}

// blinker is a Timed chip whose output toggles every 3 ms.
type blinker struct{ start time.Time }

func (b *blinker) Advance(now time.Time) (gpio.Level, time.Time, bool) {
	n := now.Sub(b.start) / (3 * time.Millisecond)
	return gpio.Level(n%2 == 1), b.start.Add((n + 1) * 3 * time.Millisecond), true
}

func TestInterruptFollowsTheChip(t *testing.T) {
	ex := executor.NewVirtual()
	var levels []gpio.Level
	in := NewInterrupt(ex, &blinker{start: ex.Now()}, func(l gpio.Level) { levels = append(levels, l) })
	in.Kick()
	_ = ex.RunFor(t.Context(), 10*time.Millisecond)
	// Initial low, then high at 3, low at 6, high at 9.
	want := []gpio.Level{gpio.Low, gpio.High, gpio.Low, gpio.High}
	if len(levels) != len(want) {
		t.Fatalf("levels %v, want %v", levels, want)
	}
	in.Stop()
	_ = ex.RunFor(t.Context(), 10*time.Millisecond)
	if len(levels) != len(want) {
		t.Errorf("edges after Stop: %v", levels)
	}
}

// An interrupt line waking and being kicked allocates nothing: an IMU's
// runs thousands of times a simulated second.
func TestInterruptAllocatesNothing(t *testing.T) {
	ex := executor.NewVirtual()
	edges := 0
	in := NewInterrupt(ex, &blinker{start: ex.Now()}, func(gpio.Level) { edges++ })
	in.Kick()
	_ = ex.RunFor(t.Context(), 10*time.Millisecond) // warm up the executor's queues
	if n := testing.AllocsPerRun(100, func() {
		in.Kick()
		_ = ex.RunFor(t.Context(), 3*time.Millisecond)
	}); n != 0 {
		t.Errorf("%v allocations per kick and edge", n)
	}
	if edges < 100 {
		t.Errorf("%d edges, want one per 3 ms run", edges)
	}
}

type caller struct{ got []byte }

func (c *caller) Tx(w, r []byte) error { return nil }
func (c *caller) GeneralCall(w []byte) { c.got = append(c.got, w...) }

func TestGeneralCall(t *testing.T) {
	b := &I2CBus{}
	if err := b.Tx(0, []byte{0x06}, nil); err == nil {
		t.Error("general call acknowledged with nobody to answer")
	}
	c := &caller{}
	b.Attach(0x40, c)
	b.Attach(0x41, &echo{})
	if err := b.Tx(0, []byte{0x06}, nil); err != nil || string(c.got) != "\x06" {
		t.Errorf("general call: %v, got %v", err, c.got)
	}
	if err := b.Tx(0, nil, make([]byte, 1)); err == nil {
		t.Error("a general-call read was acknowledged")
	}
	b.Connect(0x40, false)
	if err := b.Tx(0, []byte{0x06}, nil); err == nil {
		t.Error("an unplugged chip answered the general call")
	}
}
