package jitter

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/rt"
	"github.com/saint-os/saint/internal/childproc"
)

// Loop names a kind of periodic loop to measure.
type Loop string

// The loops Measure knows.
const (
	Ticker     Loop = "time.Ticker"       // a goroutine reading a time.Ticker
	Executor   Loop = "executor"          // executor.Every on the wall clock
	ExecutorRT Loop = "executor, rt mode" // the same after rt.Enter, with rt.Spin
)

// Options configures one measurement.
type Options struct {
	Loop     Loop
	Period   time.Duration // default 1 ms
	Duration time.Duration // default 5 s
	// Spin is ExecutorRT's executor.Options.Spin; 0 means rt.Spin, < 0
	// none.
	Spin time.Duration
}

// Result is the period error of one loop.
type Result struct {
	Loop    Loop
	Period  time.Duration
	Samples int
	P50     time.Duration
	P99     time.Duration
	P999    time.Duration
	Max     time.Duration
	// RT is what real-time mode obtained, for ExecutorRT.
	RT *rt.Report
}

func (r Result) String() string {
	return fmt.Sprintf("%-18s %6d samples  p50 %8s  p99 %8s  p99.9 %8s  max %8s",
		r.Loop, r.Samples, us(r.P50), us(r.P99), us(r.P999), us(r.Max))
}

func us(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond)) }

// Measure runs the loop for o.Duration (or until ctx ends) and returns its
// period error. The loop records each run's time into a buffer allocated up
// front, so the measurement itself makes no garbage.
func Measure(ctx context.Context, o Options) (Result, error) {
	if o.Period <= 0 {
		o.Period = time.Millisecond
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Second
	}
	n := int(o.Duration/o.Period) + 1
	at := make([]time.Time, 0, n)
	res := Result{Loop: o.Loop, Period: o.Period}
	switch o.Loop {
	case Ticker:
		tk := time.NewTicker(o.Period)
		for len(at) < n && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case now := <-tk.C:
				_ = now // the ticker's stamp is when it was due, not when we ran
				at = append(at, time.Now())
			}
		}
		tk.Stop()
	case Executor, ExecutorRT:
		done := make(chan struct{})
		go func() {
			defer close(done)
			e := executor.New(nil)
			if o.Loop == ExecutorRT {
				// This goroutine's thread ends with it, taking its
				// priority and pinning along.
				r := rt.Enter(rt.Options{CPU: rt.DefaultCPU()})
				res.RT = &r
				spin := o.Spin
				if spin == 0 {
					spin = rt.Spin
				}
				e.SetSpin(spin)
				if w, err := rt.NewWaiter(); err == nil {
					defer w.Close()
					e.SetWaiter(w)
				}
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			e.Every(o.Period, func() {
				at = append(at, e.Now())
				if len(at) == n {
					cancel()
				}
			})
			_ = e.Run(cctx)
		}()
		<-done
	default:
		return res, fmt.Errorf("jitter: unknown loop %q", o.Loop)
	}
	if len(at) < 2 {
		return res, fmt.Errorf("jitter: %s ran %d times", o.Loop, len(at))
	}
	errs := make([]time.Duration, len(at)-1)
	for i := 1; i < len(at); i++ {
		d := at[i].Sub(at[i-1]) - o.Period
		errs[i-1] = max(d, -d)
	}
	slices.Sort(errs)
	q := func(p float64) time.Duration { return errs[min(len(errs)-1, int(p*float64(len(errs))))] }
	res.Samples = len(errs)
	res.P50, res.P99, res.P999, res.Max = q(0.50), q(0.99), q(0.999), errs[len(errs)-1]
	return res, nil
}

// LoadKind names a load that competes with the loop being measured.
type LoadKind string

// The loads StartLoad knows.
const (
	// NoLoad adds nothing (the machine's own activity remains).
	NoLoad LoadKind = "none"
	// CPULoad runs one busy-looping process per CPU: other programs
	// wanting every core, as a build or a camera pipeline does.
	CPULoad LoadKind = "cpu"
	// GCLoad is CPULoad plus a goroutine in this process making 64 MB/s
	// of short-lived garbage, so the collector runs many times a second.
	GCLoad LoadKind = "cpu+gc"
	// GoroutineLoad runs one busy-looping, allocating goroutine per CPU
	// inside this process: they compete with the loop for the Go
	// runtime's processors (Ps), not only for the CPUs.
	GoroutineLoad LoadKind = "goroutines"
)

// Loads lists every LoadKind, lightest first.
var Loads = []LoadKind{NoLoad, CPULoad, GCLoad, GoroutineLoad}

// Load is a running load. Stop ends it.
type Load struct {
	stop  atomic.Bool
	wg    sync.WaitGroup
	procs []*childproc.Process
	// Allocated counts the bytes of garbage made, to show the load ran.
	Allocated atomic.Int64
}

// StartLoad starts a load of the given kind.
func StartLoad(kind LoadKind) (*Load, error) {
	l := &Load{}
	switch kind {
	case NoLoad:
	case CPULoad, GCLoad:
		for i := 0; i < runtime.NumCPU(); i++ {
			// Children that die with this process: a busy loop left
			// behind would hold a CPU until someone kills it.
			p, err := childproc.Start(exec.Command("/bin/sh", "-c", "while :; do :; done"))
			if err != nil {
				l.Stop()
				return nil, fmt.Errorf("jitter: starting a busy process: %w", err)
			}
			l.procs = append(l.procs, p)
		}
		if kind == GCLoad {
			l.wg.Add(1)
			go l.garbage()
		}
	case GoroutineLoad:
		for i := 0; i < runtime.NumCPU(); i++ {
			l.wg.Add(1)
			go l.spin()
		}
	default:
		return nil, fmt.Errorf("jitter: unknown load %q (want none, cpu, cpu+gc or goroutines)", kind)
	}
	return l, nil
}

var sink atomic.Pointer[[]byte]

// garbage allocates 64 KiB a millisecond and drops it.
func (l *Load) garbage() {
	defer l.wg.Done()
	for !l.stop.Load() {
		for i := 0; i < 4; i++ {
			b := make([]byte, 16<<10)
			sink.Store(&b)
			l.Allocated.Add(int64(len(b)))
		}
		time.Sleep(time.Millisecond)
	}
}

func (l *Load) spin() {
	defer l.wg.Done()
	x := 0
	for !l.stop.Load() {
		for i := 0; i < 1000; i++ {
			x = x*31 + i
		}
		b := make([]byte, 4096+x&0xfff)
		sink.Store(&b)
		l.Allocated.Add(int64(len(b)))
	}
}

// Stop ends the load and waits for it to be gone.
func (l *Load) Stop() {
	l.stop.Store(true)
	l.wg.Wait()
	for _, p := range l.procs {
		_ = p.Signal(syscall.SIGKILL)
		_ = p.Wait()
	}
	l.procs = nil
}
