package executor

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
)

// maxLag is how far a paced virtual clock may fall behind its wall-clock
// target before it stops trying to catch up. Without it a simulation that was
// paused by a debugger would afterwards run flat out until it had caught up.
const maxLag = 250 * time.Millisecond

// Options configures an Executor. The zero value runs on the wall clock.
type Options struct {
	// Clock is where the executor takes time from. Nil means clock.Real{}.
	// A *clock.Virtual makes the executor the owner of that clock's time:
	// it moves the clock forward to each timer's deadline.
	Clock clock.Clock
	// Speed paces a virtual clock against the wall clock: 1 runs in real
	// time, 2 twice as fast, 0 as fast as the CPU allows. Ignored for a
	// real clock.
	Speed float64
}

// Executor is a single event loop: it runs posted callbacks and timer
// callbacks one at a time, in a deterministic order, on the goroutine that
// called Run (or RunFor). Callbacks therefore never need locks among
// themselves. They must not block: blocking I/O belongs in goroutines at the
// edges, which hand their results in with Post.
//
// Order: callbacks that are ready run first-in first-out; a timer becomes
// ready when the clock reaches its deadline, timers with equal deadlines in
// the order they were armed. Under a virtual clock the same inputs therefore
// give the same sequence of events, run after run.
type Executor struct {
	clk   clock.Clock
	virt  *clock.Virtual
	speed float64

	mu      sync.Mutex
	ready   []func()
	timers  timerHeap
	seq     uint64
	running bool
	wake    chan struct{}
}

// New returns an executor configured by opts (nil means defaults).
func New(opts *Options) *Executor {
	e := &Executor{clk: clock.Real{}, wake: make(chan struct{}, 1)}
	if opts != nil {
		if opts.Clock != nil {
			e.clk = opts.Clock
		}
		e.speed = opts.Speed
	}
	if v, ok := e.clk.(*clock.Virtual); ok {
		e.virt = v
	}
	return e
}

// NewVirtual returns an executor on a new virtual clock starting at
// clock.Epoch(), running as fast as possible.
func NewVirtual() *Executor {
	return New(&Options{Clock: clock.NewVirtual(time.Time{})})
}

// Now returns the executor's current time.
func (e *Executor) Now() time.Time { return e.clk.Now() }

// Clock returns the clock the executor runs on.
func (e *Executor) Clock() clock.Clock { return e.clk }

// IsVirtual reports whether the executor runs on virtual time.
func (e *Executor) IsVirtual() bool { return e.virt != nil }

// Post queues f to run on the executor. It is safe to call from any
// goroutine, including from a callback.
func (e *Executor) Post(f func()) {
	e.mu.Lock()
	e.ready = append(e.ready, f)
	e.mu.Unlock()
	e.signal()
}

// Do runs f on the executor and waits until it has run, or until ctx ends.
// It is for goroutines at the edges (a WebSocket handler reading node state);
// calling it from a callback deadlocks.
func (e *Executor) Do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	e.Post(func() { f(); close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Timer is a callback armed on an executor.
type Timer struct {
	e        *Executor
	f        func()
	deadline time.Time
	period   time.Duration
	seq      uint64
	index    int    // position in the heap, -1 when not armed
	gen      uint64 // bumped by Stop and Reset to cancel a run already queued
}

// After arms f to run once, d from now. d <= 0 runs it at the current time,
// after the callbacks already ready.
func (e *Executor) After(d time.Duration, f func()) *Timer {
	return e.arm(d, 0, f)
}

// Every arms f to run every period, the first time one period from now.
// Deadlines advance by exactly period each time, so a 1 ms timer runs 1000
// times per virtual second with no drift. On a real clock, runs missed
// because the process was busy are skipped rather than bunched up.
// Every panics if period <= 0.
func (e *Executor) Every(period time.Duration, f func()) *Timer {
	if period <= 0 {
		panic("executor: Every needs a positive period")
	}
	return e.arm(period, period, f)
}

func (e *Executor) arm(d, period time.Duration, f func()) *Timer {
	if d < 0 {
		d = 0
	}
	t := &Timer{e: e, f: f, period: period, index: -1}
	e.mu.Lock()
	t.deadline = e.clk.Now().Add(d)
	e.push(t)
	e.mu.Unlock()
	e.signal()
	return t
}

// push adds t to the heap; e.mu must be held.
func (e *Executor) push(t *Timer) {
	e.seq++
	t.seq = e.seq
	heap.Push(&e.timers, t)
}

// Stop disarms the timer. It reports whether the timer was armed; a periodic
// timer stopped from inside its own callback does not run again.
func (t *Timer) Stop() bool {
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	t.period = 0
	t.gen++
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.e.timers, t.index)
	return true
}

// Reset re-arms the timer to run once, d from now (a periodic timer keeps
// its period from then on).
func (t *Timer) Reset(d time.Duration) {
	e := t.e
	e.mu.Lock()
	if t.index >= 0 {
		heap.Remove(&e.timers, t.index)
	}
	t.gen++
	t.deadline = e.clk.Now().Add(d)
	e.push(t)
	e.mu.Unlock()
	e.signal()
}

func (e *Executor) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// ErrRunning is returned when Run or RunFor is called while the executor is
// already running.
var ErrRunning = errors.New("executor: already running")

// Run runs callbacks until ctx is done, then returns ctx's error.
func (e *Executor) Run(ctx context.Context) error {
	return e.run(ctx, time.Time{})
}

// RunFor runs callbacks until the executor's clock has advanced by d (on a
// virtual clock the clock reads exactly start+d on return) or ctx is done.
func (e *Executor) RunFor(ctx context.Context, d time.Duration) error {
	return e.run(ctx, e.clk.Now().Add(d))
}

// RunUntil is RunFor with an absolute end time.
func (e *Executor) RunUntil(ctx context.Context, end time.Time) error {
	return e.run(ctx, end)
}

func (e *Executor) run(ctx context.Context, end time.Time) error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return ErrRunning
	}
	e.running = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running = false
		e.mu.Unlock()
	}()

	bounded := !end.IsZero()
	// Pacing anchor for a virtual clock with Speed > 0.
	wall0, virt0 := time.Now(), e.clk.Now()

	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, next, hasNext := e.nextReady()
		if f != nil {
			f()
			continue
		}
		now := e.clk.Now()
		if bounded && !now.Before(end) {
			return nil
		}
		// Nothing ready: decide how long to wait and where time goes.
		target := end
		if hasNext && (!bounded || next.Before(end)) {
			target = next
		}
		haveTarget := bounded || hasNext

		if e.virt != nil && e.speed <= 0 {
			if haveTarget {
				e.virt.Set(target)
				continue
			}
			// No timers and no end: only another goroutine can give us work.
			if err := e.waitWake(ctx, false, 0); err != nil {
				return err
			}
			continue
		}

		// The target may already have passed: the clock moves on between
		// nextReady's reading and ours. A wait that came out negative is then
		// "go round again now", never "no deadline", or a loop whose only
		// work is its own timer would sleep until someone posts.
		var wait time.Duration
		if haveTarget {
			wait = max(target.Sub(now), 0)
			if e.virt != nil {
				wait = time.Duration(float64(wait) / e.speed)
			}
		}
		if err := e.waitWake(ctx, haveTarget, wait); err != nil {
			return err
		}
		if e.virt != nil {
			paced := virt0.Add(time.Duration(float64(time.Since(wall0)) * e.speed))
			if haveTarget && paced.After(target) {
				paced = target
			}
			e.virt.Set(paced)
			if lag := time.Duration(float64(time.Since(wall0))*e.speed) - e.clk.Now().Sub(virt0); lag > maxLag {
				wall0, virt0 = time.Now(), e.clk.Now()
			}
		}
	}
}

// nextReady pops the next callback to run, moving due timers into the ready
// queue first. If nothing is ready it returns the earliest timer deadline.
func (e *Executor) nextReady() (f func(), next time.Time, hasNext bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clk.Now()
	for len(e.timers) > 0 && !e.timers[0].deadline.After(now) {
		t := heap.Pop(&e.timers).(*Timer)
		if t.period > 0 {
			t.deadline = t.deadline.Add(t.period)
			if e.virt == nil && !t.deadline.After(now) {
				// Real clock and we fell behind: skip the missed runs.
				missed := now.Sub(t.deadline)/t.period + 1
				t.deadline = t.deadline.Add(missed * t.period)
			}
			e.push(t)
		}
		e.ready = append(e.ready, e.fire(t, t.gen))
	}
	if len(e.ready) > 0 {
		f = e.ready[0]
		e.ready[0] = nil
		e.ready = e.ready[1:]
		return f, time.Time{}, false
	}
	if len(e.timers) > 0 {
		return nil, e.timers[0].deadline, true
	}
	return nil, time.Time{}, false
}

// fire wraps a due timer's callback so that a Stop or Reset between the
// timer becoming ready and its callback running cancels that run.
func (e *Executor) fire(t *Timer, gen uint64) func() {
	return func() {
		e.mu.Lock()
		live := t.gen == gen
		e.mu.Unlock()
		if live {
			t.f()
		}
	}
}

// waitWake blocks until work is posted or ctx ends and, when bounded, for at
// most d. An unbounded wait is a separate flag rather than a sentinel
// duration, so no computed duration can turn into "wait forever".
func (e *Executor) waitWake(ctx context.Context, bounded bool, d time.Duration) error {
	if bounded && d <= 0 {
		return nil
	}
	var tc <-chan time.Time
	if bounded {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-e.wake:
	case <-tc:
	}
	return nil
}

// Pending reports how many callbacks are ready and how many timers are
// armed; for tests and diagnostics.
func (e *Executor) Pending() (ready, timers int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.ready), len(e.timers)
}

type timerHeap []*Timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].deadline.Equal(h[j].deadline) {
		return h[i].seq < h[j].seq
	}
	return h[i].deadline.Before(h[j].deadline)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
