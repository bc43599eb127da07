package executor

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
)

// scenario arms a mix of one-shot and periodic timers from a seeded random
// source, lets callbacks post further work, and records every event with its
// virtual timestamp.
func scenario(seed int64) string {
	e := NewVirtual()
	rng := rand.New(rand.NewSource(seed))
	start := e.Now()
	var log strings.Builder
	record := func(name string) {
		fmt.Fprintf(&log, "%s@%d;", name, e.Now().Sub(start).Microseconds())
	}
	state := 0.0
	for i := 0; i < 20; i++ {
		i := i
		d := time.Duration(rng.Intn(50_000)) * time.Microsecond
		e.After(d, func() {
			record(fmt.Sprintf("once%d", i))
			state = state*0.9 + float64(i)
			e.Post(func() { record(fmt.Sprintf("post%d", i)) })
		})
	}
	for i := 0; i < 3; i++ {
		i := i
		p := time.Duration(1+rng.Intn(7)) * time.Millisecond
		e.Every(p, func() {
			record(fmt.Sprintf("tick%d", i))
			state += float64(i) / 3
		})
	}
	if err := e.RunFor(context.Background(), 60*time.Millisecond); err != nil {
		panic(err)
	}
	fmt.Fprintf(&log, "state=%v", state)
	return log.String()
}

func TestDeterministic(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		a, b := scenario(seed), scenario(seed)
		if a != b {
			t.Fatalf("seed %d: two runs differ:\n%s\n%s", seed, a, b)
		}
	}
	if scenario(1) == scenario(2) {
		t.Fatal("different seeds gave the same run: the scenario does not exercise the executor")
	}
}

func TestOrder(t *testing.T) {
	e := NewVirtual()
	var got []string
	add := func(s string) func() { return func() { got = append(got, s) } }
	e.After(2*time.Millisecond, add("b1"))
	e.After(1*time.Millisecond, add("a"))
	e.After(2*time.Millisecond, add("b2"))
	e.Post(add("p1"))
	e.After(0, add("zero"))
	e.Post(add("p2"))
	if err := e.RunFor(context.Background(), 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	want := "p1 p2 zero a b1 b2"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("order = %q, want %q", g, want)
	}
	if d := e.Now().Sub(clock.Epoch()); d != 5*time.Millisecond {
		t.Errorf("clock advanced %v, want 5ms", d)
	}
}

func TestEveryNoDrift(t *testing.T) {
	e := NewVirtual()
	n := 0
	var last time.Time
	e.Every(time.Millisecond, func() { n++; last = e.Now() })
	if err := e.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if n != 1000 {
		t.Errorf("1 ms timer ran %d times in 1 s, want 1000", n)
	}
	if want := clock.Epoch().Add(time.Second); !last.Equal(want) {
		t.Errorf("last tick at %v, want %v", last, want)
	}
}

func TestStopAndReset(t *testing.T) {
	e := NewVirtual()
	n := 0
	var tm *Timer
	tm = e.Every(time.Millisecond, func() {
		n++
		if n == 3 {
			tm.Stop()
		}
	})
	once := 0
	o := e.After(time.Millisecond, func() { once++ })
	if !o.Stop() {
		t.Error("Stop of an armed timer reported false")
	}
	r := 0
	rt := e.After(time.Millisecond, func() { r++ })
	rt.Reset(4 * time.Millisecond)
	var at time.Duration
	e.After(0, func() {}) // keep the ordering honest
	rt2 := e.After(time.Millisecond, func() { at = e.Now().Sub(clock.Epoch()) })
	rt2.Reset(7 * time.Millisecond)
	if err := e.RunFor(context.Background(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("periodic timer stopped in its 3rd run ran %d times", n)
	}
	if once != 0 {
		t.Errorf("stopped one-shot ran %d times", once)
	}
	if r != 1 {
		t.Errorf("reset one-shot ran %d times, want 1", r)
	}
	if at != 7*time.Millisecond {
		t.Errorf("reset timer ran at %v, want 7ms", at)
	}
}

// TestVirtualFasterThanReal runs a day of virtual time with a timer every
// second. On any machine that is a few milliseconds of work; the bound is a
// thousand times looser than that so the test only fails if virtual time is
// somehow tied to the wall clock.
func TestVirtualFasterThanReal(t *testing.T) {
	e := NewVirtual()
	n := 0
	e.Every(time.Second, func() { n++ })
	wall := time.Now()
	if err := e.RunFor(context.Background(), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(wall)
	if n != 86400 {
		t.Errorf("ran %d ticks, want 86400", n)
	}
	if elapsed > 30*time.Second {
		t.Errorf("24 h of virtual time took %v of wall time", elapsed)
	}
}

func TestPostFromOtherGoroutineAndDo(t *testing.T) {
	e := New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var hits atomic.Int32
	var posters sync.WaitGroup
	for i := 0; i < 100; i++ {
		posters.Add(1)
		go func() {
			defer posters.Done()
			e.Post(func() { hits.Add(1) })
		}()
	}
	got := 0
	for i := 0; i < 100; i++ {
		if err := e.Do(context.Background(), func() { got++ }); err != nil {
			t.Fatal(err)
		}
	}
	if got != 100 {
		t.Errorf("Do ran %d times, want 100", got)
	}
	if err := e.Do(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
	posters.Wait() // every Post has returned; some may still be queued
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	if err := e.RunFor(context.Background(), 0); err != nil {
		t.Errorf("RunFor after Run ended: %v", err)
	}
	if h := hits.Load(); h != 100 {
		// Posts raced with Run; RunFor(0) above drained what was left.
		t.Errorf("posted callbacks ran %d times, want 100", h)
	}
}

func TestPacedVirtualClockTracksWallClock(t *testing.T) {
	v := clock.NewVirtual(time.Time{})
	e := New(&Options{Clock: v, Speed: 10})
	ticks := 0
	e.Every(10*time.Millisecond, func() { ticks++ })
	// 500 ms of virtual time at 10x is ~50 ms of wall time; the run must not
	// return before the virtual clock got there.
	if err := e.RunFor(context.Background(), 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ticks != 50 {
		t.Errorf("ticks = %d, want 50", ticks)
	}
}

func TestRunTwice(t *testing.T) {
	e := NewVirtual()
	var inner error
	e.Post(func() { inner = e.RunFor(context.Background(), time.Millisecond) })
	if err := e.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if inner != ErrRunning {
		t.Errorf("nested RunFor returned %v, want ErrRunning", inner)
	}
}

func BenchmarkVirtualSecondAt1kHz(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e := NewVirtual()
		e.Every(time.Millisecond, func() {})
		if err := e.RunFor(context.Background(), time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// steppingClock is a clock that is not virtual (the executor waits for it on
// timers, as for the wall clock) but moves forward by step on every reading.
// It makes the race between two readings of a real clock happen every time:
// a deadline that was still ahead when the executor looked for due timers
// has passed by the time it computes how long to wait.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// TestDeadlinePassedBetweenReadsDoesNotStall is the stall of a 1 kHz loop on
// the real clock, made deterministic: with a negative wait taken for "no
// deadline", the executor slept until some other goroutine posted work, and
// a loop whose only work is its own timer stopped for good.
func TestDeadlinePassedBetweenReadsDoesNotStall(t *testing.T) {
	clk := &steppingClock{now: clock.Epoch(), step: 700 * time.Microsecond}
	e := New(&Options{Clock: clk})
	var ticks atomic.Int64
	e.Every(time.Millisecond, func() { ticks.Add(1) })

	// The clock advances 0.7 ms a reading, so 50 ms of its time take a few
	// dozen loop turns; a stalled loop only ends when the context does.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.RunFor(ctx, 50*time.Millisecond); err != nil {
		t.Fatalf("RunFor: %v after %d ticks: the loop stalled on a deadline that passed between two clock readings", err, ticks.Load())
	}
	if n := ticks.Load(); n < 20 {
		t.Fatalf("a 1 ms timer ran %d times in 50 ms of clock time, want about 50", n)
	}
}

// TestRealClockKHzTimerSoak runs a 1 kHz timer on the wall clock with nothing
// else to wake the loop, and checks it never stops. It asserts no timing
// precision (that is measured by the jitter benchmark), only that the loop
// keeps going: the old executor stalled in about one run in four.
func TestRealClockKHzTimerSoak(t *testing.T) {
	d := 3 * time.Second
	if testing.Short() {
		d = 500 * time.Millisecond
	}
	e := New(nil)
	var (
		n      int
		last   time.Time
		maxGap time.Duration
	)
	e.Every(time.Millisecond, func() {
		now := e.Now()
		if n > 0 {
			maxGap = max(maxGap, now.Sub(last))
		}
		last = now
		n++
	})
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = e.Run(ctx)
	gap := maxGap
	if !last.IsZero() {
		gap = max(gap, time.Since(last)-50*time.Millisecond) // the stall at the end, if any
	}
	// A second of silence in a 1 kHz loop is a stall, not scheduling noise.
	if gap > time.Second || n == 0 {
		t.Fatalf("1 kHz timer on the real clock: %d runs in %v, longest gap %v: the loop stalled", n, d, gap)
	}
	t.Logf("%d runs in %v, longest gap %v", n, d, gap)
}

// BenchmarkManyPeriodicTimers runs one virtual second of n periodic timers
// with periods spread over 1–20 ms, as a whole simulated robot arms them:
// twins, roles and bus timeouts together. It measures the timer structure.
func BenchmarkManyPeriodicTimers(b *testing.B) {
	for _, n := range []int{10, 1000, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e := NewVirtual()
				rng := rand.New(rand.NewSource(1))
				for j := 0; j < n; j++ {
					e.Every(time.Duration(1+rng.Intn(20))*time.Millisecond, func() {})
				}
				if err := e.RunFor(context.Background(), time.Second); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestResetNegativeIsNow checks that Reset with a deadline that has already
// passed (d < 0, as "at.Sub(now)" gives when at is behind) runs the timer at
// the current time in arming order, as After does, rather than ahead of
// timers already armed for now.
func TestResetNegativeIsNow(t *testing.T) {
	e := NewVirtual()
	var got []string
	late := e.After(time.Hour, func() { got = append(got, "reset") })
	e.After(time.Millisecond, func() {
		e.After(0, func() { got = append(got, "armed-first") })
		late.Reset(-5 * time.Millisecond)
	})
	if err := e.RunFor(context.Background(), 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, " "); g != "armed-first reset" {
		t.Errorf("order = %q, want %q", g, "armed-first reset")
	}
}

// TestStopCancelsQueuedRun stops and resets timers whose runs are already in
// the ready queue (due at the same instant as the callback that stops them):
// those runs must not happen.
func TestStopCancelsQueuedRun(t *testing.T) {
	e := NewVirtual()
	start := e.Now()
	var ran []string
	note := func(s string) { ran = append(ran, fmt.Sprintf("%s@%v", s, e.Now().Sub(start))) }
	var b, c *Timer
	e.After(time.Millisecond, func() { note("a"); b.Stop(); c.Reset(time.Millisecond) })
	b = e.After(time.Millisecond, func() { note("b") })
	c = e.Every(time.Millisecond, func() { note("c") })
	if err := e.RunFor(context.Background(), 2500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if g, want := strings.Join(ran, " "), "a@1ms c@2ms"; g != want {
		t.Errorf("ran %q, want %q", g, want)
	}
}

// TestTimerPathAllocatesNothing holds the 1 kHz control-loop path to zero
// allocations per period, on virtual and on real time: a timer firing, the
// ready queue and the executor's wait for the next deadline.
func TestTimerPathAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	t.Run("virtual", func(t *testing.T) {
		e := NewVirtual()
		n := 0
		e.Every(time.Millisecond, func() { n++ })
		e.Every(3*time.Millisecond, func() { n++ })
		_ = e.RunFor(ctx, 20*time.Millisecond) // grow the queues
		allocs := testing.AllocsPerRun(200, func() { _ = e.RunFor(ctx, time.Millisecond) })
		if allocs != 0 {
			t.Errorf("%.1f allocations per virtual millisecond of a 1 kHz timer, want 0", allocs)
		}
		if n < 200 {
			t.Errorf("timer ran %d times", n)
		}
	})
	for _, spin := range []time.Duration{0, 100 * time.Microsecond} {
		t.Run(fmt.Sprintf("real/spin=%v", spin), func(t *testing.T) {
			e := New(&Options{Spin: spin})
			n := 0
			e.Every(time.Millisecond, func() { n++ })
			_ = e.RunFor(ctx, 20*time.Millisecond)
			allocs := testing.AllocsPerRun(50, func() { _ = e.RunFor(ctx, time.Millisecond) })
			if allocs != 0 {
				t.Errorf("%.1f allocations per millisecond of a 1 kHz timer on the real clock, want 0", allocs)
			}
			if n == 0 {
				t.Error("timer never ran")
			}
		})
	}
}

// recordingWaiter is a Waiter that sleeps on a Go timer and counts its use.
type recordingWaiter struct {
	ch    chan struct{}
	waits atomic.Int64
}

func (w *recordingWaiter) Wait(d time.Duration) {
	w.waits.Add(1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	}
}

func (w *recordingWaiter) Wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// TestWaiterIsWokenByPostAndCancel runs the executor with a Waiter and only
// an hour-long timer: a Post from another goroutine and the end of the
// context must each end the wait.
func TestWaiterIsWokenByPostAndCancel(t *testing.T) {
	w := &recordingWaiter{ch: make(chan struct{}, 1)}
	e := New(&Options{Waiter: w})
	e.After(time.Hour, func() { t.Error("the hour-long timer ran") })
	var ticks atomic.Int64
	third := make(chan struct{})
	tick := e.Every(time.Millisecond, func() {
		if ticks.Add(1) == 3 {
			close(third)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	posted := make(chan struct{})
	go func() {
		// Once the 1 ms timer has run a few times (through the Waiter),
		// however late Run starts.
		<-third
		e.Post(func() {
			// Only the hour-long timer is left: the next wait is an
			// hour, which only the cancel can end.
			tick.Stop()
			close(posted)
		})
	}()
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx) }()
	select {
	case <-posted:
	case <-time.After(20 * time.Second):
		t.Fatal("a Post did not wake the Waiter")
	}
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the context did not wake the Waiter")
	}
	if w.waits.Load() == 0 || ticks.Load() == 0 {
		t.Errorf("waiter used %d times, 1 ms timer ran %d times", w.waits.Load(), ticks.Load())
	}
}

// slowWakeWaiter is a recordingWaiter whose Wake takes a while and then
// reports whether Run had already returned.
type slowWakeWaiter struct {
	recordingWaiter
	runReturned atomic.Bool
	lateWakes   atomic.Int64
	waiting     chan struct{} // closed at the first Wait
	firstWait   sync.Once
}

func (w *slowWakeWaiter) Wait(d time.Duration) {
	w.firstWait.Do(func() { close(w.waiting) })
	w.recordingWaiter.Wait(d)
}

func (w *slowWakeWaiter) Wake() {
	// The slowness is what this fake is for.
	time.Sleep(20 * time.Millisecond)
	if w.runReturned.Load() {
		w.lateWakes.Add(1)
	}
	w.recordingWaiter.Wake()
}

// TestRunReturnsAfterItsCancelWake ends Run's context while the executor
// sleeps in its Waiter: the wake that the context's end sends must be over
// by the time Run returns, since the caller may close the Waiter then (a
// kernel Waiter's descriptor number would be reused by the next open).
func TestRunReturnsAfterItsCancelWake(t *testing.T) {
	for i := 0; i < 5; i++ {
		w := &slowWakeWaiter{recordingWaiter: recordingWaiter{ch: make(chan struct{}, 1)}, waiting: make(chan struct{})}
		e := New(&Options{Waiter: w})
		e.After(time.Hour, func() { t.Error("the hour-long timer ran") })
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			err := e.Run(ctx)
			w.runReturned.Store(true)
			errc <- err
		}()
		<-w.waiting
		cancel()
		if err := <-errc; err != context.Canceled {
			t.Fatalf("Run returned %v, want context.Canceled", err)
		}
		time.Sleep(50 * time.Millisecond) // a late Wake would finish now
		if n := w.lateWakes.Load(); n != 0 {
			t.Fatalf("run %d: %d Wake(s) still running after Run returned", i, n)
		}
	}
}
