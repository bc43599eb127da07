package clock

import (
	"sync/atomic"
	"time"
)

// Clock tells the time. Code that runs on an executor never asks the wall
// clock directly: it asks the executor, which asks its Clock, so the same
// code runs against wall time on a robot and against virtual time in the
// simulator.
type Clock interface {
	// Now returns the current time of this clock.
	Now() time.Time
}

// Real is the wall clock. The zero value is ready to use.
type Real struct{}

// Now implements Clock.
func (Real) Now() time.Time { return time.Now() }

// Epoch returns the instant a virtual clock starts at unless told otherwise:
// 2026-01-01T00:00:00Z. It is fixed so that simulated runs print the same
// timestamps every time.
func Epoch() time.Time { return time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC) }

// Virtual is a clock that only moves when told to. It is safe for concurrent
// use; time never goes backwards. Reading it costs an atomic load, not a
// lock: an executor reads its clock for every timer it arms, thousands of
// times per simulated second.
type Virtual struct {
	start time.Time
	off   atomic.Int64 // time since start, ns
}

// NewVirtual returns a virtual clock reading start. A zero start means Epoch.
func NewVirtual(start time.Time) *Virtual {
	if start.IsZero() {
		start = Epoch()
	}
	return &Virtual{start: start.Round(0)}
}

// Now implements Clock. The time is in start's location.
func (v *Virtual) Now() time.Time {
	return v.start.Add(time.Duration(v.off.Load()))
}

// Set moves the clock to t. A t before the current reading is ignored, so
// virtual time is monotonic.
func (v *Virtual) Set(t time.Time) {
	d := int64(t.Sub(v.start))
	for {
		cur := v.off.Load()
		if d <= cur || v.off.CompareAndSwap(cur, d) {
			return
		}
	}
}

// Advance moves the clock forward by d (negative d is ignored).
func (v *Virtual) Advance(d time.Duration) {
	if d > 0 {
		v.off.Add(int64(d))
	}
}

var (
	_ Clock = Real{}
	_ Clock = (*Virtual)(nil)
)
