package encoder

import (
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/gpio"
)

// Line is a signal the encoder drives.
type Line interface {
	Set(l gpio.Level, at time.Time)
}

// BoardInput is a simulated board's way to drive a header pin from outside
// (simboard.Board.SetInput).
type BoardInput interface {
	SetInput(bcm int, l gpio.Level) error
}

// BoardLine returns the Line for GPIO bcm of board. The edge times are the
// board's clock, not the interpolated ones (see the package doc).
func BoardLine(board BoardInput, bcm int) Line { return boardLine{board, bcm} }

type boardLine struct {
	b   BoardInput
	bcm int
}

func (l boardLine) Set(v gpio.Level, _ time.Time) { _ = l.b.SetInput(l.bcm, v) }

// MaxEdgesPerUpdate bounds the edges one SetAngle generates.
const MaxEdgesPerUpdate = 1 << 20

// Options configures an Encoder.
type Options struct {
	// CountsPerRev is edges per revolution; 0 means 4096 (1024 lines).
	CountsPerRev int
	// Reverse swaps the direction (B leads A when the angle grows), as
	// wiring A and B the other way round does.
	Reverse bool
}

// Encoder is a quadrature encoder twin. Methods are safe for concurrent use.
type Encoder struct {
	a, b Line
	o    Options

	mu    sync.Mutex
	count int64
	last  time.Time
	edges int64
}

// New returns an encoder at angle 0 (both lines low) driving a and b. It
// drives both lines low at time zero.
func New(a, b Line, o Options) *Encoder {
	if o.CountsPerRev <= 0 {
		o.CountsPerRev = 4096
	}
	e := &Encoder{a: a, b: b, o: o}
	a.Set(gpio.Low, time.Time{})
	b.Set(gpio.Low, time.Time{})
	return e
}

// levels are the line levels at count c: 00, 10, 11, 01 repeating (A
// leads).
func levels(c int64) (a, b gpio.Level) {
	switch ((c % 4) + 4) % 4 {
	case 1:
		return gpio.High, gpio.Low
	case 2:
		return gpio.High, gpio.High
	case 3:
		return gpio.Low, gpio.High
	}
	return gpio.Low, gpio.Low
}

// SetAngle moves the shaft to rad (radians, unbounded) at time at and
// drives the edges passed on the way, their times spread evenly over the
// interval since the previous SetAngle.
func (e *Encoder) SetAngle(rad float64, at time.Time) {
	if math.IsNaN(rad) || math.IsInf(rad, 0) {
		return
	}
	target := math.Floor(rad / (2 * math.Pi) * float64(e.o.CountsPerRev))
	target = max(math.MinInt64/2, min(target, math.MaxInt64/2))
	e.mu.Lock()
	defer e.mu.Unlock()
	to := int64(target)
	if e.o.Reverse {
		to = -to
	}
	from := e.count
	n := to - from
	if n == 0 {
		e.last = at
		return
	}
	dir := int64(1)
	if n < 0 {
		dir, n = -1, -n
	}
	start := e.last
	if start.IsZero() || at.Before(start) {
		start = at
	}
	if n > MaxEdgesPerUpdate {
		// Too fast to follow: the lines jump to the final state.
		a, b := levels(to)
		e.a.Set(a, at)
		e.b.Set(b, at)
		e.count, e.last = to, at
		e.edges++
		return
	}
	span := at.Sub(start)
	for i := int64(1); i <= n; i++ {
		c := from + dir*i
		t := start.Add(time.Duration(float64(span) * float64(i) / float64(n)))
		pa, pb := levels(c - dir)
		a, b := levels(c)
		if a != pa {
			e.a.Set(a, t)
		}
		if b != pb {
			e.b.Set(b, t)
		}
	}
	e.count, e.last = to, at
	e.edges += n
}

// Count returns the count of the current angle.
func (e *Encoder) Count() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count
}

// Edges returns how many edges the encoder has driven.
func (e *Encoder) Edges() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.edges
}
