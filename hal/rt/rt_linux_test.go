package rt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/executor"

	"golang.org/x/sys/unix"
)

// TestEnterMatchesTheThread enters real-time mode on a goroutine of its own
// (whose thread ends with it) and checks the report against what the kernel
// says about that thread: each step either took effect or is explained.
func TestEnterMatchesTheThread(t *testing.T) {
	type result struct {
		r      Report
		attr   *unix.SchedAttr
		cpus   unix.CPUSet
		errAtt error
	}
	ch := make(chan result)
	go func() {
		r := Enter(Options{CPU: DefaultCPU(), NoMemoryLock: true})
		var res result
		res.r = r
		res.attr, res.errAtt = unix.SchedGetAttr(0, 0)
		_ = unix.SchedGetaffinity(0, &res.cpus)
		ch <- res
		// Returning while locked ends the thread, taking its priority
		// with it.
	}()
	res := <-ch
	if res.errAtt != nil {
		t.Fatal(res.errAtt)
	}
	r := res.r
	t.Logf("report: %s; warning: %q", r, r.Warning())
	if !r.ThreadLocked {
		t.Error("thread not locked")
	}
	if r.FIFO != (res.attr.Policy == unix.SCHED_FIFO) {
		t.Errorf("report says FIFO=%v, thread policy is %d", r.FIFO, res.attr.Policy)
	}
	if r.FIFO && int(res.attr.Priority) != r.Priority {
		t.Errorf("priority %d reported, thread has %d", r.Priority, res.attr.Priority)
	}
	if !r.FIFO && !strings.Contains(r.Warning(), "CAP_SYS_NICE") {
		t.Errorf("SCHED_FIFO refused but the warning does not name CAP_SYS_NICE: %q", r.Warning())
	}
	if r.CPU >= 0 && (res.cpus.Count() != 1 || !res.cpus.IsSet(r.CPU)) {
		t.Errorf("pinned to CPU %d reported, thread may run on %d CPUs", r.CPU, res.cpus.Count())
	}
	if r.MemoryLocked {
		t.Error("memory locked although NoMemoryLock was set")
	}
}

// TestRefusedPriorityNamesThePermission asks for a priority the kernel must
// refuse, and checks the report explains it rather than failing.
func TestRefusedPriorityNamesThePermission(t *testing.T) {
	ch := make(chan Report)
	go func() { ch <- Enter(Options{Priority: 100, CPU: -1, NoMemoryLock: true}) }()
	r := <-ch
	if r.FIFO || r.OK() {
		t.Fatalf("priority 100 accepted: %+v", r)
	}
	if !strings.Contains(r.Warning(), "1–99") {
		t.Errorf("warning %q does not give the valid range", r.Warning())
	}
}

func TestFIFOProblemNamesTheSettings(t *testing.T) {
	why := fifoProblem(49, unix.EPERM)
	for _, want := range []string{"CAP_SYS_NICE", "RLIMIT_RTPRIO", "LimitRTPRIO=", "AmbientCapabilities=CAP_SYS_NICE"} {
		if !strings.Contains(why, want) {
			t.Errorf("%q does not mention %s", why, want)
		}
	}
}

// TestWaiterWakesAndKeepsTheLoopAllocationFree checks the kernel Waiter: a
// Wake before a Wait is not lost, and an executor sleeping in it still runs
// a 1 kHz timer with no allocation per period.
func TestWaiterWakesAndKeepsTheLoopAllocationFree(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Wake()
	done := make(chan struct{})
	go func() { w.Wait(time.Hour); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a Wake before Wait was lost: Wait slept on")
	}

	// Run, as a node runs it, with the allocation count read around
	// 200 periods in the middle.
	e := executor.New(&executor.Options{Waiter: w, Spin: Spin})
	var n atomic.Int64
	e.Every(time.Millisecond, func() { n.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx) }()
	// Counted over 200 periods however long a loaded machine takes for
	// them, not over a fixed time.
	waitPeriods := func(k int64) bool {
		// No wait helper here: it would allocate inside the counted window.
		for end := time.Now().Add(60 * time.Second); n.Load() < k; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				return false
			}
		}
		return true
	}
	if !waitPeriods(20) {
		t.Fatalf("1 kHz timer ran %d times in a minute", n.Load())
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n0 := n.Load()
	ok := waitPeriods(n0 + 200)
	runtime.ReadMemStats(&after)
	periods := n.Load() - n0
	cancel()
	<-errc
	if !ok {
		t.Fatalf("1 kHz timer ran %d times in a minute", periods)
	}
	// The test's own waiting may allocate a few times; one allocation
	// per period would be 200 or more.
	if allocs := after.Mallocs - before.Mallocs; allocs > 20 {
		t.Errorf("%d allocations in %d periods with the kernel Waiter, want none per period", allocs, periods)
	}
}

// sleepingLoop starts a goroutine that enters real-time mode (as far as
// permitted) and waits an hour in w. It returns the goroutine's thread id
// once the thread sleeps in the kernel, and a channel closed when Wait
// returns.
func sleepingLoop(t *testing.T, w *Waiter) (tid int, returned <-chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	tids := make(chan int, 1)
	go func() {
		defer close(done)
		Enter(Options{CPU: DefaultCPU(), NoMemoryLock: true})
		tids <- unix.Gettid()
		w.Wait(time.Hour)
	}()
	tid = <-tids
	// Wait until the thread is asleep (state S), so that what the test
	// does next reaches it inside ppoll rather than before.
	bustest.CheckFor(t, 10*time.Second, time.Millisecond, func() error {
		select {
		case <-done:
			t.Fatal("Wait(time.Hour) returned at once")
		default:
		}
		if threadState(tid) != 'S' {
			return errors.New("the waiting thread never went to sleep")
		}
		return nil
	})
	return tid, done
}

// threadState reads a thread's scheduling state ('R', 'S', …) from
// /proc/self/task/TID/stat; 0 when it cannot.
func threadState(tid int) byte {
	data, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0
	}
	// The state follows the command name, which is in parentheses.
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2]
	}
	return 0
}

// stillWaiting fails the test if Wait has returned; a correct Wait of an
// hour never returns without a Wake, so how long it looks only bounds how
// late a wrongly returned Wait is noticed.
func stillWaiting(t *testing.T, returned <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-returned:
		t.Fatalf("Wait(time.Hour) returned after %s, with no Wake", after)
	case <-time.After(100 * time.Millisecond):
	}
}

// wakes checks that Wake ends a wait that has an hour left.
func wakes(t *testing.T, w *Waiter, returned <-chan struct{}) {
	t.Helper()
	w.Wake()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Wake did not end a Wait with an hour left")
	}
}

// TestWaiterWakeEndsALongWait checks that Wake ends a Wait that is asleep
// in the kernel.
func TestWaiterWakeEndsALongWait(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, returned := sleepingLoop(t, w)
	wakes(t, w, returned)
}

// TestWaiterSleepsThroughSignals sends signals to the waiting thread, as
// the Go runtime (preemption), a profiler or a child's exit do: the wait
// goes on to its deadline rather than returning and leaving the executor
// to poll the clock at real-time priority until then.
func TestWaiterSleepsThroughSignals(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tid, returned := sleepingLoop(t, w)
	for i := 0; i < 3; i++ {
		if err := unix.Tgkill(unix.Getpid(), tid, unix.SIGURG); err != nil {
			t.Fatal(err)
		}
		stillWaiting(t, returned, "a signal")
	}
	wakes(t, w, returned)
}

// TestCollectorRunsWhileTheLoopWaits runs garbage collections, each
// stopping the world twice, while a real-time loop sleeps in the Waiter
// with an hour to go: they complete, the loop sleeps on, and a Wake still
// ends its wait.
func TestCollectorRunsWhileTheLoopWaits(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, returned := sleepingLoop(t, w)
	collected := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			runtime.GC()
		}
		close(collected)
	}()
	select {
	case <-collected:
	case <-time.After(60 * time.Second):
		t.Fatal("10 garbage collections did not complete while the loop waited")
	}
	stillWaiting(t, returned, "garbage collections")
	wakes(t, w, returned)
}

// TestWakeAfterCloseWritesNothing closes a Waiter, opens another eventfd,
// which gets the descriptor number it had (the lowest free one), and wakes
// the closed Waiter: the other eventfd must not be written.
func TestWakeAfterCloseWritesNothing(t *testing.T) {
	w, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	old := w.fd
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other)
	if other != old {
		// Something else opened a descriptor in between (taking old or
		// not): putting ours over it would break its owner.
		t.Skipf("the next open got descriptor %d, not the closed Waiter's %d", other, old)
	}
	w.Wake()
	var buf [8]byte
	if n, err := unix.Read(old, buf[:]); err != unix.EAGAIN {
		t.Fatalf("a Wake after Close wrote %d bytes into the file now at its descriptor number (read error %v)", n, err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
