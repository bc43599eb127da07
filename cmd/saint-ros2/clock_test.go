package main

import (
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/ros2/cyclone"
)

// rosTime reads a decoded builtin_interfaces/Time.
func rosTime(x any) time.Time {
	s := x.(map[string]any)
	n := func(v any) int64 {
		switch v := v.(type) {
		case int64:
			return v
		case uint64:
			return int64(v)
		case int32:
			return int64(v)
		case uint32:
			return int64(v)
		}
		return 0
	}
	return time.Unix(n(s["sec"]), n(s["nanosec"])).UTC()
}

// clockReader follows /clock as a node with use_sim_time:=true does
// (best effort, rclcpp's ClockQoS).
type clockReader struct {
	mu     sync.Mutex
	latest time.Time
	n      int
	back   bool // /clock went backwards
	r      *cyclone.Reader
}

func readClock(t *testing.T, p *peer) *clockReader {
	t.Helper()
	m := p.message("rosgraph_msgs/Clock")
	c := &clockReader{}
	var err error
	c.r, err = p.p.NewReader("rt/clock", m.DDSTypeName(), cyclone.QoS{Reliable: false, Depth: 1}, func(cdr []byte) {
		v, _, err := p.reg.Decode(m, cdr)
		if err != nil {
			t.Errorf("/clock: %v", err)
			return
		}
		now := rosTime(v["clock"])
		c.mu.Lock()
		defer c.mu.Unlock()
		if now.Before(c.latest) {
			c.back = true
		}
		c.latest = now
		c.n++
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *clockReader) now() (time.Time, int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.latest, c.n, c.back
}

// TestSimClockOverROS2 runs the simulation at twice real time, where its
// clock is not the wall clock: /clock carries the simulation's time
// (from 2026-01-01) and advances, never backwards, and the odometry is
// stamped on that clock — each stamp the /clock time of its instant,
// within a second of simulated time for the delivery between the two
// topics (the wall clock, by contrast, is months away).
func TestSimClockOverROS2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulation")
	}
	dir := buildBins(t)
	domain := loopbackDDS(t)
	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--ros2", "--adopt", "--speed", "2",
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	p := newPeer(t, domain)
	clk := readClock(t, p)
	odom, odomReader := p.subscribe(msg.TopicTracksOdom, "nav_msgs/Odometry")
	waitFor(t, 60*time.Second, "the bridge's /clock and odometry writers", func() bool {
		return clk.r.MatchedWriters() > 0 && odomReader.MatchedWriters() > 0
	})
	waitFor(t, 10*time.Second, "/clock samples", func() bool { _, n, _ := clk.now(); return n >= 10 })
	first, _, _ := clk.now()
	if d := first.Sub(clock.Epoch()); d < 0 || d > time.Hour {
		t.Errorf("/clock %v: want the simulation's clock, which starts at %v", first, clock.Epoch())
	}
	odomSpeed(odom) // what is queued predates the clock read above
	checked := 0
	for end := time.Now().Add(20 * time.Second); checked < 20 && time.Now().Before(end); {
		select {
		case o := <-odom:
			stamp := rosTime(o["header"].(map[string]any)["stamp"])
			now, _, _ := clk.now()
			if diff := math.Abs(stamp.Sub(now).Seconds()); diff > 1 {
				t.Errorf("odometry stamped %v while /clock read %v: %.3f s apart", stamp, now, diff)
			}
			checked++
		case <-time.After(time.Second):
		}
	}
	if checked < 20 {
		t.Fatalf("only %d odometry samples", checked)
	}
	last, n, back := clk.now()
	t.Logf("/clock: %d samples, %v → %v", n, first, last)
	if !last.After(first) {
		t.Errorf("/clock did not advance: %v, then %v", first, last)
	}
	if back {
		t.Error("/clock went backwards")
	}
}
