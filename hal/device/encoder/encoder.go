package encoder

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/gpio"
)

// Pin is an input that reports its edges.
type Pin interface {
	gpio.PinIO
	gpio.EdgeWatcher
}

// Options configures a Decoder; nil means the defaults.
type Options struct {
	// CountsPerRev is the number of counts (edges, 4 per line of the code
	// wheel) per shaft revolution; it scales Radians and
	// RadiansPerSecond. 0 leaves them unavailable (they return 0).
	CountsPerRev int
	// StopAfter is how long without an edge before the velocity is zero;
	// 0 means 100 ms.
	StopAfter time.Duration
	// Pull is the inputs' pull resistor; 0 (PullNoChange) keeps what
	// the pins have. Open-collector encoders need PullUp.
	Pull gpio.Pull
}

// ring is how many recent edges the velocity estimate spans.
const ring = 16

type edge struct {
	t     time.Time
	count int64
}

// Decoder counts the edges of a quadrature encoder. Its methods are safe for
// concurrent use; edges may arrive on any goroutine.
type Decoder struct {
	o     Options
	stops []func()

	mu      sync.Mutex
	a, b    gpio.Level
	count   int64
	illegal int
	dir     int
	hist    [ring]edge // recent edges in one direction, a circular buffer
	first   int        // index of the oldest in hist
	n       int
}

// New watches a and b, configured as inputs reporting both edges, and starts
// counting from zero at their current levels. Close stops it.
func New(a, b Pin, o *Options) (*Decoder, error) {
	if a == nil || b == nil {
		return nil, errors.New("encoder: pins A and B are required")
	}
	d := &Decoder{}
	if o != nil {
		d.o = *o
	}
	if d.o.CountsPerRev < 0 {
		return nil, fmt.Errorf("encoder: %d counts per revolution, want ≥ 0", d.o.CountsPerRev)
	}
	if d.o.StopAfter <= 0 {
		d.o.StopAfter = 100 * time.Millisecond
	}
	for _, p := range []Pin{a, b} {
		if err := p.In(d.o.Pull, gpio.BothEdges); err != nil {
			return nil, fmt.Errorf("encoder: %s: %w", p.Name(), err)
		}
	}
	d.mu.Lock()
	d.a, d.b = a.Read(), b.Read()
	d.mu.Unlock()
	d.stops = []func(){
		a.WatchEdges(func(e gpio.EdgeEvent) { d.Edge(true, e) }),
		b.WatchEdges(func(e gpio.EdgeEvent) { d.Edge(false, e) }),
	}
	return d, nil
}

// Close stops watching the pins.
func (d *Decoder) Close() {
	for _, s := range d.stops {
		s()
	}
	d.stops = nil
}

// phase is the position of (a, b) in the forward sequence 00, 10, 11, 01.
func phase(a, b gpio.Level) int {
	switch {
	case !bool(a) && !bool(b):
		return 0
	case bool(a) && !bool(b):
		return 1
	case bool(a) && bool(b):
		return 2
	}
	return 3
}

// Edge applies an edge of channel A (onA) or B. The decoder's own watchers
// call it; it is exported for decoders fed from elsewhere (a recorded
// trace, another edge source).
func (d *Decoder) Edge(onA bool, e gpio.EdgeEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	na, nb := d.a, d.b
	if onA {
		if e.Level == d.a {
			d.illegal++
			return
		}
		na = e.Level
	} else {
		if e.Level == d.b {
			d.illegal++
			return
		}
		nb = e.Level
	}
	step := (phase(na, nb) - phase(d.a, d.b) + 4) % 4 // 1 forward, 3 backward
	d.a, d.b = na, nb
	dir := 1
	if step == 3 {
		dir = -1
	}
	d.count += int64(dir)
	if dir != d.dir {
		d.n, d.first = 0, 0
		d.dir = dir
	}
	if d.n == ring {
		d.first = (d.first + 1) % ring
		d.n--
	}
	d.hist[(d.first+d.n)%ring] = edge{e.Time, d.count}
	d.n++
}

// at returns the i-th oldest edge in the history; d.mu must be held.
func (d *Decoder) at(i int) *edge { return &d.hist[(d.first+i)%ring] }

// Count returns the position in counts since New (or Reset).
func (d *Decoder) Count() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// Reset sets the count to zero; the velocity history is kept.
func (d *Decoder) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.n {
		d.at(i).count -= d.count
	}
	d.count = 0
}

// Illegal returns how many edges were inconsistent with a quadrature
// sequence (missed edges).
func (d *Decoder) Illegal() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.illegal
}

// Direction returns the direction of the last count: 1 forward, −1
// backward, 0 before any.
func (d *Decoder) Direction() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

// Velocity returns the speed in counts per second as of now (the caller's
// clock: the executor's).
func (d *Decoder) Velocity(now time.Time) float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == 0 {
		return 0
	}
	last := *d.at(d.n - 1)
	since := now.Sub(last.t)
	if since >= d.o.StopAfter {
		return 0
	}
	// The oldest edge at a distinct time gives the longest span.
	var v float64
	for i := 0; i < d.n-1; i++ {
		if old := d.at(i); last.t.After(old.t) {
			v = float64(last.count-old.count) / last.t.Sub(old.t).Seconds()
			break
		}
	}
	if v == 0 {
		// One edge in this direction so far, or edges all stamped
		// alike: no period to measure yet.
		return 0
	}
	if since > 0 {
		if bound := 1 / since.Seconds(); bound < math.Abs(v) {
			v = math.Copysign(bound, v)
		}
	}
	return v
}

// Radians returns the shaft angle since New, or 0 without CountsPerRev.
func (d *Decoder) Radians() float64 {
	if d.o.CountsPerRev == 0 {
		return 0
	}
	return float64(d.Count()) * 2 * math.Pi / float64(d.o.CountsPerRev)
}

// RadiansPerSecond returns the shaft speed as of now, or 0 without
// CountsPerRev.
func (d *Decoder) RadiansPerSecond(now time.Time) float64 {
	if d.o.CountsPerRev == 0 {
		return 0
	}
	return d.Velocity(now) * 2 * math.Pi / float64(d.o.CountsPerRev)
}
