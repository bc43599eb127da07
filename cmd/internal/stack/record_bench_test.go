package stack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/msg"
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

// BenchmarkRobotFoxglove runs the whole adopted robot in real time (speed
// 1) for 10 s with its server's Foxglove listener and 0 or 10 clients
// subscribed to every channel but the head camera's (clients=10), or to
// every channel, which turns the camera on (clients=10,camera), reading
// over loopback WebSockets in this process, and reports CPU per second of
// wall time and the messages each client got:
//
//	go test -run '^$' -bench RobotFoxglove -benchtime 1x ./cmd/internal/stack
func BenchmarkRobotFoxglove(b *testing.B) {
	b.Run("clients=0", func(b *testing.B) { benchFoxglove(b, 0, false) })
	b.Run("clients=10", func(b *testing.B) { benchFoxglove(b, 10, false) })
	b.Run("clients=10,camera", func(b *testing.B) { benchFoxglove(b, 10, true) })
}

func benchFoxglove(b *testing.B, clients int, camera bool) {
	const wallRun = 10 * time.Second
	var cpu time.Duration
	var dropped uint64
	var received atomic.Int64
	for range b.N {
		dir := b.TempDir()
		if err := fixtures.WriteConfig(filepath.Join(dir, "config")); err != nil {
			b.Fatal(err)
		}
		st, err := stack.New(stack.Options{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"), Seed: 1, Speed: 1,
			FoxgloveAddr: "127.0.0.1:0"})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = st.Exec.Run(ctx) }()
		if err := st.Start(); err != nil {
			b.Fatal(err)
		}
		_ = st.Exec.Do(ctx, func() { _ = st.AdoptAll(nil) })
		fg, addr := st.Server.Foxglove(), st.Server.Addrs()["foxglove"]
		// Adoption and advertising have no single end event across all topics.
		time.Sleep(3 * time.Second) // adoption; every topic advertised
		for range clients {
			conn, _, err := (&websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}}).Dial("ws://"+addr+"/", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			var subs []map[string]any
			for _, ch := range fg.Channels() {
				if ch.Topic == msg.TopicHeadCameraImageRaw && !camera {
					continue
				}
				subs = append(subs, map[string]any{"id": ch.ID, "channelId": ch.ID})
			}
			if err := conn.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": subs}); err != nil {
				b.Fatal(err)
			}
			go func() {
				for {
					typ, m, err := conn.ReadMessage()
					if err != nil {
						return
					}
					if typ == websocket.BinaryMessage && m[0] == 1 {
						received.Add(1)
					}
				}
			}()
		}
		received.Store(0)
		c0 := cpuTime()
		// The measured run is a span of wall time.
		time.Sleep(wallRun)
		cpu += cpuTime() - c0
		dropped += fg.Stats().Dropped
		st.Shutdown()
		cancel()
	}
	secs := wallRun.Seconds() * float64(b.N)
	b.ReportMetric(cpu.Seconds()*1000/secs, "cpu-ms/s")
	if clients > 0 {
		b.ReportMetric(float64(received.Load())/secs/float64(clients), "msgs/s/client")
		b.ReportMetric(float64(dropped), "dropped")
	}
}
