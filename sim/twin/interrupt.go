package twin

import (
	"sync"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
)

// Timed is a chip whose state moves with the simulated clock: an IMU that
// samples at its output data rate and signals each sample on an interrupt
// pin.
type Timed interface {
	// Advance brings the chip up to now. It returns the level of the
	// chip's interrupt output, and when that level or the chip's data next
	// changes on its own; ok is false when nothing will happen until the
	// controller reconfigures the chip.
	Advance(now time.Time) (level gpio.Level, next time.Time, ok bool)
}

// Interrupt drives a Timed chip's interrupt output on an executor: it wakes
// at each time the chip announces, advances it, and reports every change of
// level to out, on the executor, stamped with the executor's clock.
//
// The zero value is not usable; call NewInterrupt.
type Interrupt struct {
	ex   *executor.Executor
	chip Timed
	out  func(gpio.Level)
	// runFn is in.run as a func value, made once: a method value made
	// at each Kick would allocate thousands of times a simulated second.
	runFn func()

	mu      sync.Mutex // guards the fields below, touched from Kick's callers
	timer   *executor.Timer
	level   gpio.Level
	started bool
	stopped bool
}

// NewInterrupt returns an interrupt line from chip to out, not yet running.
func NewInterrupt(ex *executor.Executor, chip Timed, out func(gpio.Level)) *Interrupt {
	in := &Interrupt{ex: ex, chip: chip, out: out}
	in.runFn = in.run
	return in
}

// Kick asks for the chip to be advanced and its next event rescheduled: a
// twin calls it after the controller changed the configuration or cleared
// an interrupt. It is safe to call from any goroutine, and under the chip's
// own lock (it only posts).
func (in *Interrupt) Kick() {
	in.ex.Post(in.runFn)
}

// Stop ends the line; the output keeps its last level.
func (in *Interrupt) Stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stopped = true
	if in.timer != nil {
		in.timer.Stop()
	}
}

// run advances the chip to the executor's now and arms the next wake-up.
// It runs on the executor.
func (in *Interrupt) run() {
	in.mu.Lock()
	if in.stopped {
		in.mu.Unlock()
		return
	}
	now := in.ex.Now()
	level, next, ok := in.chip.Advance(now)
	// One timer, re-armed: an IMU's data-ready line wakes thousands of
	// times a simulated second.
	switch {
	case ok && in.timer == nil:
		in.timer = in.ex.After(max(next.Sub(now), 0), in.runFn)
	case ok:
		in.timer.Reset(max(next.Sub(now), 0))
	case in.timer != nil:
		in.timer.Stop()
	}
	changed := !in.started || level != in.level
	in.started, in.level = true, level
	in.mu.Unlock()
	if changed {
		in.out(level)
	}
}
