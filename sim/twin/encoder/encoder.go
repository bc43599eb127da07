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
	SetInputAt(bcm int, l gpio.Level, at time.Time) error
}

// BoardLine returns the Line for GPIO bcm of board. Each edge keeps its
// interpolated time (the board's SetInputAt), so a decoder measuring speed
// from edge timestamps sees the shaft's real speed, not the physics step.
func BoardLine(board BoardInput, bcm int) Line { return boardLine{board, bcm} }

type boardLine struct {
	b   BoardInput
	bcm int
}

func (l boardLine) Set(v gpio.Level, at time.Time) { _ = l.b.SetInputAt(l.bcm, v, at) }

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
	pos   int64   // counts of the shaft angle, before Reverse
	angle float64 // the last angle set
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
// drives the edges passed on the way. Each edge is stamped with the time the
// shaft crossed its angle, taking the motion since the previous SetAngle as
// uniform: exact for a shaft at constant speed.
func (e *Encoder) SetAngle(rad float64, at time.Time) {
	if math.IsNaN(rad) || math.IsInf(rad, 0) {
		return
	}
	perRad := float64(e.o.CountsPerRev) / (2 * math.Pi)
	target := math.Floor(rad * perRad)
	target = max(math.MinInt64/4, min(target, math.MaxInt64/4))
	e.mu.Lock()
	defer e.mu.Unlock()
	to := int64(target)
	from, prev := e.pos, e.angle
	start := e.last
	if start.IsZero() || at.Before(start) {
		start = at
	}
	e.pos, e.angle, e.last = to, rad, at
	n := to - from
	if n == 0 {
		return
	}
	dir := int64(1)
	if n < 0 {
		dir, n = -1, -n
	}
	if n > MaxEdgesPerUpdate {
		// Too fast to follow: the lines jump to the final state.
		a, b := levels(e.count(to))
		e.a.Set(a, at)
		e.b.Set(b, at)
		e.edges++
		return
	}
	span := float64(at.Sub(start))
	moved := rad - prev
	for i := int64(1); i <= n; i++ {
		p := from + dir*i
		// Forward, the edge into p is at p's lower bound; backward, the
		// edge out of p+1 is at p+1's lower bound.
		boundary := p
		if dir < 0 {
			boundary = p + 1
		}
		frac := 1.0
		if moved != 0 {
			frac = max(0, min((float64(boundary)/perRad-prev)/moved, 1))
		}
		t := start.Add(time.Duration(math.Round(span * frac)))
		pa, pb := levels(e.count(p - dir))
		a, b := levels(e.count(p))
		if a != pa {
			e.a.Set(a, t)
		}
		if b != pb {
			e.b.Set(b, t)
		}
	}
	e.edges += n
}

// count is the decoder-facing count at shaft position p.
func (e *Encoder) count(p int64) int64 {
	if e.o.Reverse {
		return -p
	}
	return p
}

// Count returns the count of the current angle, as a decoder counting
// every edge sees it.
func (e *Encoder) Count() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count(e.pos)
}

// Edges returns how many edges the encoder has driven.
func (e *Encoder) Edges() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.edges
}
