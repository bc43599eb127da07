package stack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/foxglove"
)

// benchSim is how much simulated time each benchmark iteration runs.
const benchSim = 10 * time.Second

// BenchmarkRobotRecording runs the whole adopted robot at full speed for
// benchSim of virtual time, without and with a recording of every topic,
// and reports the process's CPU time and the recording's size per
// simulated second. The difference between the two is what recording
// costs:
//
//	go test -run '^$' -bench RobotRecording -benchtime 3x ./cmd/internal/stack
func BenchmarkRobotRecording(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchRobot(b, false) })
	b.Run("on", func(b *testing.B) { benchRobot(b, true) })
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchRobot(b *testing.B, recordOn bool) {
	var cpu, wall time.Duration
	var bytes int64
	var msgs uint64
	for range b.N {
		dir := b.TempDir()
		if err := fixtures.WriteConfig(filepath.Join(dir, "config")); err != nil {
			b.Fatal(err)
		}
		st, err := stack.New(stack.Options{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"), Seed: 1, Speed: 0})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if err := pump(ctx, st, st.Start); err != nil {
			b.Fatal(err)
		}
		if err := st.AdoptAll(nil); err != nil {
			b.Fatal(err)
		}
		if err := st.Exec.RunFor(ctx, 5*time.Second); err != nil {
			b.Fatal(err)
		}
		var rec *record.Recorder
		file := filepath.Join(dir, "run.mcap")
		if recordOn {
			if _, err := foxglove.PublishTransforms(st.Broker.Connect(nil), st.Exec); err != nil {
				b.Fatal(err)
			}
			if rec, err = record.Start(record.Options{Bus: st.Broker.Connect(nil), Exec: st.Exec, File: file, Lossless: true}); err != nil {
				b.Fatal(err)
			}
		}
		c0, w0 := cpuTime(), time.Now()
		if err := st.Exec.RunFor(ctx, benchSim); err != nil {
			b.Fatal(err)
		}
		if rec != nil {
			if err := rec.Stop(); err != nil {
				b.Fatal(err)
			}
			msgs += rec.Status().Messages
			fi, err := os.Stat(file)
			if err != nil {
				b.Fatal(err)
			}
			bytes += fi.Size()
		}
		cpu += cpuTime() - c0
		wall += time.Since(w0)
		_ = pump(ctx, st, func() error { st.Shutdown(); return nil })
	}
	sims := benchSim.Seconds() * float64(b.N)
	b.ReportMetric(cpu.Seconds()*1000/sims, "cpu-ms/sim-s")
	b.ReportMetric(wall.Seconds()*1000/sims, "wall-ms/sim-s")
	if recordOn {
		b.ReportMetric(float64(bytes)/sims, "bytes/sim-s")
		b.ReportMetric(float64(msgs)/sims, "msgs/sim-s")
	}
}

// pump runs f on another goroutine while running the executor here, for
// calls (Start, Shutdown) that wait for the executor.
func pump(ctx context.Context, st *stack.Stack, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	for {
		if err := st.Exec.RunFor(ctx, 0); err != nil {
			return err
		}
		select {
		case err := <-done:
			return errors.Join(err, st.Exec.RunFor(ctx, 0))
		case <-time.After(100 * time.Microsecond):
		}
	}
}
