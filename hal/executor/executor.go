package executor

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
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
	// Spin, on a real clock, is how long before a deadline the executor
	// stops sleeping and polls the clock instead. The OS wakes a sleeping
	// thread tens to hundreds of microseconds late; polling the last stretch
	// trades that much CPU time per period for a punctual deadline. Zero
	// (the default) always sleeps. Meant for a control loop on a core of
	// its own (see hal/rt).
	Spin time.Duration
	// Waiter, when set, is what the executor blocks in while it waits for
	// a deadline on a real clock, instead of a Go timer and channel: a
	// wait the OS wakes directly, on the executor's own thread (see
	// hal/rt). Nil uses Go timers.
	Waiter Waiter
}

// Waiter blocks the executor's goroutine until a deadline or a wake-up. A
// Go timer wakes a goroutine through the runtime's scheduler, on another
// thread, which on a loaded machine adds tens to hundreds of microseconds;
// a Waiter that sleeps in the kernel on the loop's locked, real-time
// thread is woken by the kernel's timer itself.
type Waiter interface {
	// Wait blocks for at most d, less if Wake is called (before or
	// during the wait: a wake-up is never lost).
	Wait(d time.Duration)
	// Wake ends the current or next Wait. Safe from any goroutine.
	Wake()
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
//
// A timer firing allocates nothing: the ready queue is a ring of (callback,
// timer, generation) entries and the timers live in a heap ordered by an
// integer key, so a 1 kHz control loop produces no garbage for the collector
// to stop it for.
type Executor struct {
	clk   clock.Clock
	virt  *clock.Virtual
	speed float64
	spin  time.Duration
	base  time.Time // deadlines are kept as offsets from base

	// waiter is Options.Waiter; signal reads it on any goroutine.
	waiter atomic.Pointer[waiterBox]

	mu      sync.Mutex
	ready   ring
	timers  timerHeap
	seq     uint64
	running bool
	wake    chan struct{}

	// sleep is the one timer waits use, reset for each wait, so that
	// waiting for the next deadline allocates nothing. Only the goroutine
	// in Run touches it.
	sleep *time.Timer
}

// New returns an executor configured by opts (nil means defaults).
func New(opts *Options) *Executor {
	e := &Executor{clk: clock.Real{}, wake: make(chan struct{}, 1)}
	if opts != nil {
		if opts.Clock != nil {
			e.clk = opts.Clock
		}
		e.speed = opts.Speed
		e.spin = max(opts.Spin, 0)
		e.SetWaiter(opts.Waiter)
	}
	e.base = e.clk.Now()
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

// SetSpin changes Options.Spin. Call it before Run or from a callback: the
// loop reads it between callbacks.
func (e *Executor) SetSpin(d time.Duration) { e.spin = max(d, 0) }

// SetWaiter changes Options.Waiter. Call it before Run or from a callback,
// on the goroutine that runs the executor when the Waiter belongs to its
// thread.
func (e *Executor) SetWaiter(w Waiter) {
	if w == nil {
		e.waiter.Store(nil)
		return
	}
	e.waiter.Store(&waiterBox{w})
}

// waiterBox holds a Waiter in an atomic.Pointer.
type waiterBox struct{ w Waiter }

// currentWaiter returns the Waiter, nil when there is none.
func (e *Executor) currentWaiter() Waiter {
	if b := e.waiter.Load(); b != nil {
		return b.w
	}
	return nil
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
	e.ready.push(entry{f: f})
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
	e      *Executor
	f      func()
	period time.Duration
	key    int64 // deadline - executor base, in ns: the heap's order
	seq    uint64
	index  int    // position in the heap, -1 when not armed
	gen    uint64 // bumped by Stop and Reset to cancel a run already queued
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
	t.key = e.keyIn(d)
	e.push(t)
	e.mu.Unlock()
	e.signal()
	return t
}

// keyIn is the heap key of the deadline d from now. Deadlines are kept as
// integer offsets from base only: a time.Time addition and subtraction per
// timer run were a tenth of a busy simulation's CPU.
func (e *Executor) keyIn(d time.Duration) int64 {
	now := int64(e.clk.Now().Sub(e.base))
	if k := now + int64(d); k >= now {
		return k
	}
	return math.MaxInt64
}

// deadline is the time of heap key k.
func (e *Executor) deadline(k int64) time.Time { return e.base.Add(time.Duration(k)) }

// push adds t to the heap; e.mu must be held.
func (e *Executor) push(t *Timer) {
	e.stamp(t)
	e.timers.push(t)
}

// stamp gives t the next arming sequence number, which orders timers with
// equal deadlines; e.mu must be held.
func (e *Executor) stamp(t *Timer) {
	e.seq++
	t.seq = e.seq
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
	t.e.timers.remove(t.index)
	return true
}

// Reset re-arms the timer to run once, d from now (a periodic timer keeps
// its period from then on). As with After, d <= 0 runs it at the current
// time after the callbacks already ready: a deadline computed as "at minus
// now" that has just passed is due now, never earlier than timers armed
// before it for now.
func (t *Timer) Reset(d time.Duration) {
	if d < 0 {
		d = 0
	}
	e := t.e
	e.mu.Lock()
	if t.index >= 0 {
		e.timers.remove(t.index)
	}
	t.gen++
	t.key = e.keyIn(d)
	e.push(t)
	e.mu.Unlock()
	e.signal()
}

func (e *Executor) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
	if w := e.currentWaiter(); w != nil {
		w.Wake()
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

	if e.currentWaiter() != nil {
		// A Waiter sleeping in the kernel does not see ctx end: wake it.
		// Run returns only once that wake is over, so that a caller that
		// closes the Waiter after Run cannot race with it.
		woken := make(chan struct{})
		stopWake := context.AfterFunc(ctx, func() {
			defer close(woken)
			e.signal()
		})
		defer func() {
			if !stopWake() {
				<-woken
			}
		}()
	}

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
	nowKey := int64(now.Sub(e.base))
	for len(e.timers) > 0 && e.timers[0].key <= nowKey {
		t := e.timers[0]
		e.ready.push(entry{f: t.f, t: t, gen: t.gen})
		if t.period <= 0 {
			e.timers.remove(0)
			continue
		}
		// A periodic timer stays in the heap: its next deadline moves it
		// down from the top, one sift instead of a pop and a push.
		t.key += int64(t.period)
		if e.virt == nil && t.key <= nowKey {
			// Real clock and we fell behind: skip the missed runs.
			missed := (nowKey-t.key)/int64(t.period) + 1
			t.key += missed * int64(t.period)
		}
		e.stamp(t)
		e.timers.down(0)
	}
	for e.ready.n > 0 {
		en := e.ready.pop()
		// A Stop or Reset between the timer becoming ready and now
		// cancels this run.
		if en.t != nil && en.t.gen != en.gen {
			continue
		}
		return en.f, time.Time{}, false
	}
	if len(e.timers) > 0 {
		return nil, e.deadline(e.timers[0].key), true
	}
	return nil, time.Time{}, false
}

// waitWake blocks until work is posted or ctx ends and, when bounded, for at
// most d. An unbounded wait is a separate flag rather than a sentinel
// duration, so no computed duration can turn into "wait forever".
func (e *Executor) waitWake(ctx context.Context, bounded bool, d time.Duration) error {
	if bounded && d <= 0 {
		return nil
	}
	if bounded && e.virt == nil && (e.spin > 0 || e.currentWaiter() != nil) {
		return e.spinWait(ctx, d)
	}
	var tc <-chan time.Time
	if bounded {
		tc = e.startSleep(d)
		defer e.sleep.Stop()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-e.wake:
	case <-tc:
	}
	return nil
}

// startSleep arms the executor's one wait timer for d and returns its
// channel. Since Go 1.23 a stopped or reset timer never delivers a stale
// tick, so reusing it is safe.
func (e *Executor) startSleep(d time.Duration) <-chan time.Time {
	if e.sleep == nil {
		e.sleep = time.NewTimer(d)
	} else {
		e.sleep.Reset(d)
	}
	return e.sleep.C
}

// spinWait is waitWake on a real clock with Spin or a Waiter set: it sleeps
// until Spin before the deadline, in the Waiter if there is one, then polls
// the clock (and the wake channel) until the deadline.
func (e *Executor) spinWait(ctx context.Context, d time.Duration) error {
	deadline := e.clk.Now().Add(d)
	if w := e.currentWaiter(); w != nil {
		if d > e.spin {
			select {
			case <-e.wake:
				return nil
			default:
			}
			w.Wait(d - e.spin)
		}
	} else if d > e.spin {
		tc := e.startSleep(d - e.spin)
		select {
		case <-ctx.Done():
			e.sleep.Stop()
			return ctx.Err()
		case <-e.wake:
			e.sleep.Stop()
			return nil
		case <-tc:
		}
	}
	for e.clk.Now().Before(deadline) {
		select {
		case <-e.wake:
			return nil
		default:
		}
	}
	return ctx.Err()
}

// Pending reports how many callbacks are ready and how many timers are
// armed; for tests and diagnostics.
func (e *Executor) Pending() (ready, timers int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ready.n, len(e.timers)
}

// timerHeap is a binary min-heap of armed timers ordered by (key, seq),
// each timer knowing its index. It is typed rather than container/heap so
// that comparisons are two integer compares, with no interface calls.
type timerHeap []*Timer

func (h timerHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timerHeap) push(t *Timer) {
	t.index = len(*h)
	*h = append(*h, t)
	h.up(t.index)
}

// remove takes out the timer at index i.
func (h *timerHeap) remove(i int) {
	old := *h
	n := len(old) - 1
	t := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	t.index = -1
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
}

func (h timerHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// down sifts the timer at i towards the leaves and reports whether it moved.
func (h timerHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// entry is one callback in the ready queue. For a timer's run, t and gen
// identify the arming it belongs to, so that a Stop or Reset in between
// cancels it without a closure per run.
type entry struct {
	f   func()
	t   *Timer
	gen uint64
}

// ring is a FIFO of entries in a circular buffer that grows by doubling and
// never shrinks, so a steady stream of callbacks allocates nothing.
type ring struct {
	buf  []entry
	head int
	n    int
}

func (r *ring) push(en entry) {
	if r.n == len(r.buf) {
		buf := make([]entry, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			buf[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = en
	r.n++
}

func (r *ring) pop() entry {
	en := r.buf[r.head]
	r.buf[r.head] = entry{} // let the callback be collected
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return en
}
