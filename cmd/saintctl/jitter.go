package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/saint-os/saint/hal/rt/jitter"
)

// jitterCmd measures a periodic loop's period error on this machine: a bare
// time.Ticker, the executor, and with --rt the executor in real-time mode,
// one after the other, under the chosen load.
func jitterCmd(args []string, out io.Writer) error {
	f := flag.NewFlagSet("jitter", flag.ContinueOnError)
	period := f.Duration("period", time.Millisecond, "the loop's period")
	duration := f.Duration("duration", 10*time.Second, "how long to measure each loop")
	realTime := f.Bool("rt", false, "also measure the executor in real-time mode (SCHED_FIFO, pinned, memory locked)")
	load := f.String("load", "none", "competing load: none, cpu (a busy process per CPU), cpu+gc (and 64 MB/s of garbage in this process), goroutines (a busy goroutine per CPU in this process), all")
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("jitter: unexpected argument %q", f.Arg(0))
	}
	if *period <= 0 || *duration < 2**period {
		return errors.New("jitter: --period must be positive and --duration at least two periods")
	}
	loads := []jitter.LoadKind{jitter.LoadKind(*load)}
	if *load == "all" {
		loads = jitter.Loads
	}
	loops := []jitter.Loop{jitter.Ticker, jitter.Executor}
	if *realTime {
		loops = append(loops, jitter.ExecutorRT)
	}
	fmt.Fprintf(out, "period error of a %v loop, %v each\n", *period, *duration)
	for _, kind := range loads {
		fmt.Fprintf(out, "load %s:\n", kind)
		for _, loop := range loops {
			l, err := jitter.StartLoad(kind)
			if err != nil {
				return err
			}
			r, err := jitter.Measure(context.Background(), jitter.Options{Loop: loop, Period: *period, Duration: *duration})
			l.Stop()
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "  %s\n", r)
			if r.RT != nil {
				fmt.Fprintf(out, "  %-18s %s\n", "", r.RT)
				if w := r.RT.Warning(); w != "" {
					fmt.Fprintf(out, "  warning: %s\n", w)
				}
			}
		}
	}
	return nil
}
