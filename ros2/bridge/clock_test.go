package bridge_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
)

func newClockRig(t *testing.T, mode bridge.ClockMode) *rig {
	t.Helper()
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	ex := bustest.RunExecutor(t)
	r := &rig{t: t, ex: ex, bus: mem.New(), dds: ddstest.New(), reg: reg}
	r.br, err = bridge.New(bridge.Options{Bus: r.bus, Exec: ex, DDS: r.dds, Registry: reg, Clock: mode, CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.br.Stop)
	return r
}

func (r *rig) decode(typ string, cdr []byte) map[string]any {
	r.t.Helper()
	m, _ := r.reg.Message(typ)
	v, _, err := r.reg.Decode(m, cdr)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

// timeOf reads a decoded builtin_interfaces/Time.
func timeOf(x any) time.Time {
	s := x.(map[string]any)
	return time.Unix(toInt(s["sec"]), toInt(s["nanosec"])).UTC()
}

func toInt(x any) int64 {
	switch n := x.(type) {
	case int64:
		return n
	case uint64:
		return int64(n)
	case int32:
		return int64(n)
	case uint32:
		return int64(n)
	case float64:
		return int64(n)
	}
	panic("not a number")
}

func stampOf(v map[string]any) time.Time { return timeOf(v["header"].(map[string]any)["stamp"]) }

func clockOf(v map[string]any) time.Time { return timeOf(v["clock"]) }

func odometryAt(t time.Time) msg.Odometry {
	return msg.Odometry{Header: msg.Header{Stamp: msg.TimeOf(t), FrameID: "odom"}, ChildFrameID: "base_link"}
}

// In simulation at any speed but real time, /clock carries the
// simulation's clock and stamps stay on it; nothing is stamped before the
// clock is known.
func TestSimClockOnClockTopic(t *testing.T) {
	r := newClockRig(t, bridge.SimClock)
	if got := r.dds.Type("rt/clock"); got != "rosgraph_msgs::msg::dds_::Clock_" {
		t.Fatalf("rt/clock has type %q", got)
	}
	sim := clock.Epoch().Add(90 * time.Second)
	if err := r.bus.Publish(msg.TopicTracksOdom, odometryAt(sim.Add(-time.Second))); err != nil {
		t.Fatal(err)
	}
	if err := r.bus.Publish(bridge.SimClockTopic, bridge.SimClockSample{Time: msg.TimeOf(sim)}); err != nil {
		t.Fatal(err)
	}
	if err := r.bus.Publish(msg.TopicTracksOdom, odometryAt(sim)); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "/clock", func() bool { return len(r.dds.Written("rt/clock")) == 1 })
	if got := clockOf(r.decode("rosgraph_msgs/Clock", r.dds.Written("rt/clock")[0])); !got.Equal(sim) {
		t.Errorf("/clock %v, want the simulation's %v", got, sim)
	}
	checkFor(t, "odometry", func() bool { return len(r.dds.Written("rt/saint/tracks/odom")) >= 1 })
	odom := r.dds.Written("rt/saint/tracks/odom")
	if len(odom) != 1 {
		t.Fatalf("%d odometry samples, want 1: the one before the clock was known has no stamp to give", len(odom))
	}
	if got := stampOf(r.decode("nav_msgs/Odometry", odom[0])); !got.Equal(sim) {
		t.Errorf("odometry stamp %v, want the simulation's %v", got, sim)
	}
}

// Paced to the wall clock (saint-sim --speed 1), every stamp — headers,
// SystemStatus.timestamp in a service reply, the nodes' status — and
// /clock are the wall-clock time the simulation instant was paced to.
func TestSimClockPacedToWallClock(t *testing.T) {
	r := newClockRig(t, bridge.SimClock)
	sim := clock.Epoch().Add(90 * time.Second)
	wall := time.Date(2026, time.November, 29, 1, 30, 0, 250_000_000, time.UTC)
	w := msg.TimeOf(wall)
	if err := r.bus.Publish(bridge.SimClockTopic, bridge.SimClockSample{Time: msg.TimeOf(sim), Wall: &w}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "/clock", func() bool { return len(r.dds.Written("rt/clock")) == 1 })
	if got := clockOf(r.decode("rosgraph_msgs/Clock", r.dds.Written("rt/clock")[0])); !got.Equal(wall) {
		t.Errorf("/clock %v, want the wall clock %v", got, wall)
	}
	if err := r.bus.Publish(msg.TopicTracksOdom, odometryAt(sim.Add(1500*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "odometry", func() bool { return len(r.dds.Written("rt/saint/tracks/odom")) == 1 })
	if got, want := stampOf(r.decode("nav_msgs/Odometry", r.dds.Written("rt/saint/tracks/odom")[0])), wall.Add(1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("odometry stamp %v, want %v", got, want)
	}

	simSeconds := float64(sim.Add(2*time.Second).UnixNano()) / 1e9
	if err := r.bus.Publish(msg.NodeStatusTopic("sim-head"), msg.NodeStatus{NodeID: "sim-head", Timestamp: simSeconds}); err != nil {
		t.Fatal(err)
	}
	sub, err := r.bus.Serve(msg.ServiceSystemStatus, r.ex, func(_ bus.Msg, reply bus.Reply) {
		reply(msg.SystemStatus{ServerName: "sim", Timestamp: simSeconds}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	hdr := ros2.RequestHeader{GUID: 7, Seq: 1}
	r.dds.Inject("rq/saint/system/statusRequest", r.encode("saint_os/GetSystemStatus_Request", map[string]any{}, &hdr))
	checkFor(t, "the status reply", func() bool { return len(r.dds.Written("rr/saint/system/statusReply")) == 1 })
	svc, _ := r.reg.Service("saint_os/GetSystemStatus")
	resp, _, err := r.reg.Decode(svc.Response, r.dds.Written("rr/saint/system/statusReply")[0])
	if err != nil {
		t.Fatal(err)
	}
	want := float64(wall.Add(2*time.Second).UnixNano()) / 1e9
	if got := resp["status"].(map[string]any)["timestamp"].(float64); math.Abs(got-want) > 1e-6 {
		t.Errorf("SystemStatus.timestamp %.6f, want the wall clock's %.6f", got, want)
	}
	checkFor(t, "node status", func() bool { return len(r.dds.Written("rt/saint/nodes/sim_2dhead/status")) == 1 })
	ns := r.decode("saint_os/NodeStatus", r.dds.Written("rt/saint/nodes/sim_2dhead/status")[0])
	if got := ns["timestamp"].(float64); math.Abs(got-want) > 1e-6 {
		t.Errorf("NodeStatus.timestamp %.6f, want %.6f", got, want)
	}
}

// On the robot the bus's times are the wall clock's: nothing on /clock,
// stamps unchanged.
func TestWallClockLeavesStamps(t *testing.T) {
	r := newClockRig(t, bridge.WallClock)
	if slices.Contains(r.dds.Topics(), "rt/clock") {
		t.Error("a bridge on the wall clock publishes /clock")
	}
	at := time.Date(2026, time.November, 29, 1, 30, 0, 0, time.UTC)
	if err := r.bus.Publish(msg.TopicTracksOdom, odometryAt(at)); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "odometry", func() bool { return len(r.dds.Written("rt/saint/tracks/odom")) == 1 })
	if got := stampOf(r.decode("nav_msgs/Odometry", r.dds.Written("rt/saint/tracks/odom")[0])); !got.Equal(at) {
		t.Errorf("odometry stamp %v, want the bus's %v", got, at)
	}
	if _, err := bridge.New(bridge.Options{Bus: r.bus, Exec: r.ex, DDS: r.dds, Clock: 7}); err == nil {
		t.Error("Options.Clock 7: no error")
	}
}
