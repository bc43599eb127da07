package jitter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// TestMeasureCountsEveryRun checks the measurement, not the machine: every
// loop runs about Duration/Period times and the percentiles are ordered.
func TestMeasureCountsEveryRun(t *testing.T) {
	for _, loop := range []Loop{Ticker, Executor, ExecutorRT} {
		r, err := Measure(context.Background(), Options{Loop: loop, Period: 2 * time.Millisecond, Duration: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(r)
		if r.Samples != 50 {
			t.Errorf("%s: %d samples, want 50 (one per period)", loop, r.Samples)
		}
		if !(r.P50 <= r.P99 && r.P99 <= r.P999 && r.P999 <= r.Max) {
			t.Errorf("%s: percentiles out of order: %v", loop, r)
		}
		if (loop == ExecutorRT) != (r.RT != nil) {
			t.Errorf("%s: RT report %v", loop, r.RT)
		}
	}
	if _, err := Measure(context.Background(), Options{Loop: "sundial"}); err == nil {
		t.Error("an unknown loop was measured")
	}
}

func TestLoadRuns(t *testing.T) {
	for _, kind := range Loads {
		l, err := StartLoad(kind)
		if err != nil {
			t.Fatal(err)
		}
		// Until the load's goroutines have allocated, however late they
		// start (the comparison below says if they never do).
		if kind == GCLoad || kind == GoroutineLoad {
			_ = bustest.Poll(10*time.Second, 5*time.Millisecond, func() bool { return l.Allocated.Load() > 0 })
		} else {
			// A load that allocates nothing has no event to wait for; the
			// while lets one that wrongly allocates show it.
			time.Sleep(20 * time.Millisecond)
		}
		procs := len(l.procs)
		l.Stop()
		if wantProcs := kind == CPULoad || kind == GCLoad; wantProcs != (procs > 0) {
			t.Errorf("%s: %d busy processes", kind, procs)
		}
		if wantGarbage := kind == GCLoad || kind == GoroutineLoad; wantGarbage != (l.Allocated.Load() > 0) {
			t.Errorf("%s: %d bytes of garbage", kind, l.Allocated.Load())
		}
	}
	if _, err := StartLoad("earthquake"); err == nil {
		t.Error("an unknown load started")
	}
}

// BenchmarkLoopJitter measures a 1 kHz loop's period error, b.N periods per
// loop, under each load:
//
//	go test -run '^$' -bench LoopJitter -benchtime 10000x ./hal/rt/jitter/
func BenchmarkLoopJitter(b *testing.B) {
	for _, load := range Loads {
		for _, loop := range []Loop{Ticker, Executor, ExecutorRT} {
			b.Run(fmt.Sprintf("load=%s/%s", load, loop), func(b *testing.B) {
				l, err := StartLoad(load)
				if err != nil {
					b.Fatal(err)
				}
				r, err := Measure(context.Background(), Options{Loop: loop, Period: time.Millisecond, Duration: time.Duration(b.N) * time.Millisecond})
				l.Stop()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(r.P50)/1e3, "p50-µs")
				b.ReportMetric(float64(r.P99)/1e3, "p99-µs")
				b.ReportMetric(float64(r.P999)/1e3, "p99.9-µs")
				b.ReportMetric(float64(r.Max)/1e3, "max-µs")
				if r.RT != nil && !r.RT.OK() {
					b.Log(r.RT.Warning())
				}
			})
		}
	}
}
