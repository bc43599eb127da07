package stack

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/sim/model/arm"
)

// startAdopted builds the whole stack on a virtual clock, starts it at
// its clock's first instant, adopts every node and runs until all six are
// ACTIVE: the same robot, in the same pose, in every run. It returns with
// the executor stopped, for the caller to run with RunFor.
func startAdopted(tb testing.TB) *Stack {
	tb.Helper()
	dir := tb.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := fixtures.WriteConfig(cfg); err != nil {
		tb.Fatal(err)
	}
	st, err := New(Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), HTTPAddr: "127.0.0.1:0", WSAddr: "127.0.0.1:0", Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.StartHeld(context.Background()); err != nil {
		tb.Fatal(err)
	}
	shutdownAtEnd(tb, st)
	// Adopting at the instant the stack started, not whenever this
	// goroutine gets there, makes the adopted pose the same in every run.
	if err := st.AdoptAll(nil); err != nil {
		tb.Fatal(err)
	}
	for range 100 {
		active := 0
		for _, n := range st.Nodes {
			if n.State() == msg.StateActive {
				active++
			}
		}
		if active == len(st.Nodes) {
			return st
		}
		if err := st.Exec.RunFor(context.Background(), 100*time.Millisecond); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Fatal("the nodes are not all ACTIVE after 10 s")
	return nil
}

// BenchmarkStackSecond runs one virtual second of the whole simulated
// robot, as saint-sim --speed 0 --adopt runs it: the server (with its web
// and WebSocket listeners), the six nodes adopted and active in their
// roles, the physics and every twin. It reports the real-time factor:
// simulated seconds per wall second.
func BenchmarkStackSecond(b *testing.B) {
	st := startAdopted(b)
	// Settle: the roles' start-up (homing, calibration) is not the
	// steady state being measured.
	if err := st.Exec.RunFor(context.Background(), 2*time.Second); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if err := st.Exec.RunFor(context.Background(), time.Second); err != nil {
			b.Fatal(err)
		}
	}
	reportSpeed(b, cpuTime()-cpu0)
}

// reportSpeed reports the real-time factor, simulated seconds per wall
// second ("rtf"), and per second of the process's CPU time ("cpu-rtf"):
// on a machine shared with other work the second is what the simulation
// would reach on a core of its own.
func reportSpeed(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rtf")
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "cpu-rtf")
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStackSecondWithClient is BenchmarkStackSecond with a WebSocket
// client on the API sending 12 requests per wall second, as the web UI's
// pages do (node list, node details, RC status, system status): serving
// them must not hold virtual time still.
func BenchmarkStackSecondWithClient(b *testing.B) {
	st := startAdopted(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- st.Exec.Run(ctx) }()
	c, _, err := websocket.DefaultDialer.Dial("ws://"+st.Server.Addrs()["ws"]+"/saint", nil)
	cancel()
	<-runErr
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	requests := []string{
		`{"type":"management","action":"list_adopted"}`,
		`{"type":"management","action":"get_node_info","params":{"node_id":"sim-head"}}`,
		`{"type":"rc","action":"get_status"}`,
		`{"type":"command","target":"system","action":"status"}`,
	}
	var answered atomic.Int64
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
			answered.Add(1)
		}
	}()
	stop := make(chan struct{})
	sent := make(chan int)
	go func() {
		tick := time.NewTicker(time.Second / 12)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-stop:
				sent <- n
				return
			case <-tick.C:
				if c.WriteMessage(websocket.TextMessage, []byte(requests[n%len(requests)])) != nil {
					sent <- n
					return
				}
				n++
			}
		}
	}()
	if err := st.Exec.RunFor(context.Background(), 2*time.Second); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if err := st.Exec.RunFor(context.Background(), time.Second); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportSpeed(b, cpuTime()-cpu0)
	close(stop)
	n := <-sent
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "req/s")
	_ = answered.Load()
}

// The adopted robot is the same in every run: the arms end up in the same
// pose to the bit, whatever the wall clock did while the stack started.
func TestAdoptedPoseIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole robot twice")
	}
	pose := func() [2][arm.NumJoints]float64 {
		st := startAdopted(t)
		if err := st.Exec.RunFor(context.Background(), time.Second); err != nil {
			t.Fatal(err)
		}
		var q [2][arm.NumJoints]float64
		for side, a := range st.Robot.Arms {
			for j := range q[side] {
				q[side][j] = a.Joint(j).Angle()
			}
		}
		return q
	}
	first, second := pose(), pose()
	if first != second {
		t.Errorf("adopted arm poses differ between runs:\n%v\n%v", first, second)
	}
}

// BenchmarkStackSecondWithCamera is BenchmarkStackSecond with the head
// camera streaming (640×480 rgb8, 30 frames a second of virtual time), turned
// on as the web UI turns it on: a WebSocket client sends the camera command
// and subscribes to the JPEG frames on the "camera" topic. Frames are
// rendered on the executor, so this is the cost of the simulated camera:
// with the head still (each frame a copy of the last) and with the head
// panning from side to side (each frame rendered).
func BenchmarkStackSecondWithCamera(b *testing.B) {
	b.Run("head=still", func(b *testing.B) { benchStackCamera(b, false) })
	b.Run("head=moving", func(b *testing.B) { benchStackCamera(b, true) })
}

func benchStackCamera(b *testing.B, moving bool) {
	st := startAdopted(b)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- st.Exec.Run(ctx) }()
	c, _, err := websocket.DefaultDialer.Dial("ws://"+st.Server.Addrs()["ws"]+"/saint", nil)
	if err == nil {
		err = c.WriteMessage(websocket.TextMessage, []byte(`{"id":"s","type":"subscribe","topics":["camera"]}`))
	}
	if err == nil {
		err = c.WriteMessage(websocket.TextMessage, []byte(`{"id":"c","type":"command","target":"head","action":"camera","params":{"enable":true}}`))
	}
	if err != nil {
		cancel()
		<-runErr
		b.Fatal(err)
	}
	defer c.Close()
	var messages atomic.Int64
	answered := make(chan struct{})
	go func() {
		for {
			_, m, err := c.ReadMessage()
			if err != nil {
				return
			}
			if messages.Add(1) == 2 {
				close(answered)
			}
			_ = m
		}
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		b.Error("no answer to the camera command in 10 s")
	}
	cancel()
	<-runErr
	if err := st.Exec.RunFor(context.Background(), 2*time.Second); err != nil {
		b.Fatal(err)
	}
	cmd := st.Broker.Connect(nil)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		if moving {
			// A new side every second, 30° away: the head moves
			// and the camera renders rather than copies.
			pan := float32(15 - 30*(i%2))
			if err := cmd.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: pan, Speed: 0.2}); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Exec.RunFor(context.Background(), time.Second); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportSpeed(b, cpuTime()-cpu0)
}
