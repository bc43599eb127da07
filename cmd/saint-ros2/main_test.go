package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/cyclone"
)

// bins holds saint-sim, saint-ros2, saint-server and saint-node, built once into one folder so that
// saint-sim --ros2 finds the bridge beside itself.
var bins struct {
	once sync.Once
	dir  string
	err  error
}

func buildBins(t *testing.T) string {
	t.Helper()
	bins.once.Do(func() {
		bins.dir, bins.err = os.MkdirTemp("", "saint-ros2-test-")
		if bins.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", bins.dir+string(filepath.Separator),
			"github.com/saint-os/saint/cmd/saint-sim", "github.com/saint-os/saint/cmd/saint-ros2",
			"github.com/saint-os/saint/cmd/saint-server", "github.com/saint-os/saint/cmd/saint-node")
		if out, err := cmd.CombinedOutput(); err != nil {
			bins.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// peer is a ROS 2-conventions DDS participant of the test's own (Cyclone
// DDS, like rmw_cyclonedds_cpp).
type peer struct {
	t   *testing.T
	reg *ros2.Registry
	p   *cyclone.Participant
}

func newPeer(t *testing.T, domain uint32) *peer {
	t.Helper()
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	p, err := cyclone.NewParticipant(domain)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &peer{t: t, reg: reg, p: p}
}

func (p *peer) message(name string) *ros2.Message {
	m, ok := p.reg.Message(name)
	if !ok {
		p.t.Fatalf("no %s", name)
	}
	return m
}

// subscribe returns a channel of the decoded samples of a ROS topic.
func (p *peer) subscribe(topic, typ string) (<-chan map[string]any, *cyclone.Reader) {
	m := p.message(typ)
	ch := make(chan map[string]any, 256)
	r, err := p.p.NewReader("rt"+topic, m.DDSTypeName(), cyclone.QoS{Reliable: true}, func(cdr []byte) {
		v, _, err := p.reg.Decode(m, cdr)
		if err != nil {
			p.t.Errorf("%s: %v", topic, err)
			return
		}
		select {
		case ch <- v:
		default:
		}
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return ch, r
}

func (p *peer) encode(typ string, v any, hdr *ros2.RequestHeader) []byte {
	b, _ := json.Marshal(v)
	var obj map[string]any
	_ = json.Unmarshal(b, &obj)
	cdr, err := p.reg.Encode(p.message(typ), obj, hdr)
	if err != nil {
		p.t.Fatal(err)
	}
	return cdr
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	bustest.WaitUntil(t, d, what, ok)
}

// loopbackDDS keeps this test's DDS traffic on loopback, in a domain of
// its own, for the processes it starts and for itself.
func loopbackDDS(t *testing.T) uint32 {
	domain := uint32(1 + rand.IntN(200))
	t.Setenv("CYCLONEDDS_URI", cyclone.LoopbackConfig)
	t.Setenv("ROS_DOMAIN_ID", strconv.Itoa(int(domain)))
	return domain
}

// drainN returns the next n samples of ch.
func drainN(t *testing.T, ch <-chan map[string]any, n int) []map[string]any {
	t.Helper()
	for { // what is queued is old: take fresh samples
		select {
		case <-ch:
			continue
		default:
		}
		break
	}
	var out []map[string]any
	for len(out) < n {
		select {
		case v := <-ch:
			out = append(out, v)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d samples of %d", len(out), n)
		}
	}
	return out
}

// odomSpeed drains ch and returns the last forward speed and x.
func odomSpeed(ch <-chan map[string]any) (v, x float64, n int) {
	for {
		select {
		case o := <-ch:
			v = o["twist"].(map[string]any)["twist"].(map[string]any)["linear"].(map[string]any)["x"].(float64)
			x = o["pose"].(map[string]any)["pose"].(map[string]any)["position"].(map[string]any)["x"].(float64)
			n++
		default:
			return v, x, n
		}
	}
}

// TestSimulationOverROS2 runs saint-sim --ros2 --adopt at real-time speed
// and drives it as a ROS 2 node would, over DDS with ROS 2's conventions.
func TestSimulationOverROS2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulation")
	}
	dir := buildBins(t)
	domain := loopbackDDS(t)
	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--ros2", "--adopt", "--speed", "1",
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	p := newPeer(t, domain)

	odom, odomReader := p.subscribe(msg.TopicTracksOdom, "nav_msgs/Odometry")
	heads, _ := p.subscribe(msg.TopicHeadState, "saint_os/HeadState")
	twist, err := p.p.NewWriter("rt"+msg.TopicTracksCmdVel, "geometry_msgs::msg::dds_::Twist_", cyclone.QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the bridge's odometry writer", func() bool { return odomReader.MatchedWriters() > 0 })
	waitFor(t, 10*time.Second, "the bridge's cmd_vel reader", func() bool { return twist.MatchedReaders() > 0 })
	select {
	case h := <-heads:
		if _, ok := h["pan"].(float32); !ok {
			t.Errorf("HeadState %v", h)
		}
	case <-time.After(10 * time.Second):
		t.Error("no saint_os/HeadState on rt/saint/head/state")
	}

	// Paced to the wall clock (--speed 1), the stamps and /clock are
	// wall-clock time, not the simulation's clock (which starts at
	// 2026-01-01): within a generous window of this process's clock.
	clk := readClock(t, p)
	waitFor(t, 10*time.Second, "/clock", func() bool { _, n, _ := clk.now(); return n > 0 })
	for _, o := range drainN(t, odom, 5) {
		stamp := rosTime(o["header"].(map[string]any)["stamp"])
		if d := time.Since(stamp); d < -2*time.Second || d > 2*time.Second {
			t.Errorf("odometry stamped %v at wall-clock time %v: want wall-clock stamps at --speed 1", stamp, time.Now().UTC())
		}
	}
	if c, _, _ := clk.now(); time.Since(c).Abs() > 2*time.Second {
		t.Errorf("/clock %v at wall-clock time %v: want the wall clock at --speed 1", c, time.Now().UTC())
	}

	// (a) Twist at 10 Hz: odometry reports the commanded speed.
	const speed = 0.3
	drive := func(d time.Duration, v float64) {
		cdr := p.encode("geometry_msgs/Twist", msg.Twist{Linear: msg.Vector3{X: v}}, nil)
		period := time.NewTicker(100 * time.Millisecond) // 10 Hz, as a teleop node sends
		defer period.Stop()
		for end := time.Now().Add(d); time.Now().Before(end); <-period.C {
			if err := twist.Write(cdr); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, x0, _ := odomSpeed(odom)
	drive(3*time.Second, speed)
	v, x1, n := odomSpeed(odom)
	if n == 0 {
		t.Fatal("no odometry while driving")
	}
	t.Logf("driving: odometry %.3f m/s, %.2f m in 3 s (%d samples)", v, x1-x0, n)
	if v < speed*0.9 || v > speed*1.1 {
		t.Errorf("odometry speed %.3f m/s after 3 s at %.1f m/s, want within 10 %%", v, speed)
	}
	if x1-x0 < 0.5 {
		t.Errorf("odometry moved %.2f m in 3 s at %.1f m/s", x1-x0, speed)
	}
	drive(1500*time.Millisecond, 0)

	// (c) The adopt service, with rmw_cyclonedds_cpp's request header.
	svc, _ := p.reg.Service("saint_os/AdoptNode")
	replies := make(chan struct {
		v   map[string]any
		hdr ros2.RequestHeader
	}, 4)
	rr, err := p.p.NewReader("rr/saint/nodes/adoptReply", svc.Response.DDSTypeName(), cyclone.QoS{Reliable: true}, func(cdr []byte) {
		v, hdr, err := p.reg.Decode(svc.Response, cdr)
		if err != nil {
			t.Errorf("adopt reply: %v", err)
			return
		}
		select { // a request sent again may be answered twice
		case replies <- struct {
			v   map[string]any
			hdr ros2.RequestHeader
		}{v, hdr}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	rq, err := p.p.NewWriter("rq/saint/nodes/adoptRequest", svc.Request.DDSTypeName(), cyclone.QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the adopt service", func() bool { return rq.MatchedReaders() > 0 && rr.MatchedWriters() > 0 })
	hdr := ros2.RequestHeader{GUID: 0x5a1e7, Seq: 1}
	// Sent again each second until answered: the bridge's reader may not
	// have matched this writer yet when it is first written.
	var r struct {
		v   map[string]any
		hdr ros2.RequestHeader
	}
	answered := false
	for end := time.Now().Add(15 * time.Second); !answered && time.Now().Before(end); {
		if err := rq.Write(p.encode("saint_os/AdoptNode_Request", msg.AdoptNodeRequest{NodeID: "no-such-node", Role: "head"}, &hdr)); err != nil {
			t.Fatal(err)
		}
		select {
		case r = <-replies:
			answered = true
		case <-time.After(time.Second):
		}
	}
	if !answered {
		t.Fatal("no reply on rr/saint/nodes/adoptReply")
	}
	t.Logf("adopt reply: %v", r.v)
	if r.hdr != hdr {
		t.Errorf("reply header %+v, want %+v", r.hdr, hdr)
	}
	if r.v["success"] != false || !strings.Contains(fmt.Sprint(r.v["message"]), "no-such-node") {
		t.Errorf("adopting a node that does not exist: %v", r.v)
	}

	// (d) With the e-stop latched, a Twist moves nothing.
	estop, err := p.p.NewWriter("rt"+msg.TopicTracksEStop, "saint_os::msg::dds_::EStop_", cyclone.QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the bridge's estop reader", func() bool { return estop.MatchedReaders() > 0 })
	tracks, _ := p.subscribe(msg.TopicTracksState, "saint_os/TrackState")
	// Written until the tracks' own state says the stop is latched, rather
	// than once and trusted to have arrived after a fixed wait.
	latched := false
	for end := time.Now().Add(15 * time.Second); !latched && time.Now().Before(end); {
		if err := estop.Write(p.encode("saint_os/EStop", msg.EStop{Active: true, Source: "ros2", Reason: "test"}, nil)); err != nil {
			t.Fatal(err)
		}
		wait := time.After(300 * time.Millisecond)
	states:
		for !latched {
			select {
			case st := <-tracks:
				latched = st["estop_active"] == true
			case <-wait:
				break states
			}
		}
	}
	if !latched {
		t.Fatal("the tracks' state never showed the e-stop latched")
	}
	_, xs, _ := odomSpeed(odom)
	drive(2*time.Second, speed)
	v, xe, _ := odomSpeed(odom)
	t.Logf("e-stop: odometry %.3f m/s, %.3f m", v, xe-xs)
	if v > 0.02 || xe-xs > 0.05 {
		t.Errorf("e-stop latched: odometry speed %.3f m/s, moved %.3f m under a %.1f m/s Twist", v, xe-xs, speed)
	}
}

// TestHumanoidOverROS2 runs saint-sim --robot-type pi_plus-S-12L8A0G2H0W
// --robot-id 7 --ros2 --adopt: the humanoid's limbs, driven only through
// their node middlewares, are on DDS under /robot_7 — a leg's
// joint_states arrives (and at the root, by robot-wide names) and the
// neck's request_control answers with a session, which release_control
// ends; none of the reference robot's roles (head, arms, tracks, console,
// balance) has a bridge endpoint.
func TestHumanoidOverROS2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulation")
	}
	dir := buildBins(t)
	domain := loopbackDDS(t)
	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--robot-type", "pi_plus-S-12L8A0G2H0W", "--robot-id", "7", "--ros2", "--adopt",
		"--speed", "1", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	p := newPeer(t, domain)

	joints, jr := p.subscribe("/robot_7/saint/limb/leg_left/joint_states", "sensor_msgs/JointState")
	root, _ := p.subscribe("/robot_7/joint_states", "sensor_msgs/JointState")
	waitFor(t, 60*time.Second, "the bridge's left leg joint_states writer", func() bool { return jr.MatchedWriters() > 0 })
	select {
	case js := <-joints:
		names, _ := js["name"].([]any)
		pos, _ := js["position"].([]any)
		t.Logf("left leg joint_states: %v %v", names, pos)
		if len(names) != 6 || len(pos) != 6 || names[0] != "hip_pitch" {
			t.Errorf("left leg joint_states %v, want its six joints from hip_pitch", js)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no sensor_msgs/JointState on rt/robot_7/saint/limb/leg_left/joint_states")
	}
	// The root's joint_states carries the same joints by their robot-wide
	// names.
	deadline := time.After(20 * time.Second)
	for found := false; !found; {
		select {
		case js := <-root:
			names, _ := js["name"].([]any)
			found = len(names) == 6 && names[0] == "left_hip_pitch"
		case <-deadline:
			t.Fatal("no joint_states of the left leg with robot-wide names on rt/robot_7/joint_states")
		}
	}

	call := func(service, typ string, req any, seq int64) map[string]any {
		t.Helper()
		svc, _ := p.reg.Service(typ)
		replies := make(chan map[string]any, 4)
		rr, err := p.p.NewReader("rr"+service+"Reply", svc.Response.DDSTypeName(), cyclone.QoS{Reliable: true}, func(cdr []byte) {
			v, hdr, err := p.reg.Decode(svc.Response, cdr)
			if err != nil {
				t.Errorf("%s reply: %v", service, err)
				return
			}
			if hdr.Seq == seq {
				select { // a request sent again may be answered twice
				case replies <- v:
				default:
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		rq, err := p.p.NewWriter("rq"+service+"Request", svc.Request.DDSTypeName(), cyclone.QoS{Reliable: true})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the "+service+" service", func() bool { return rq.MatchedReaders() > 0 && rr.MatchedWriters() > 0 })
		hdr := ros2.RequestHeader{GUID: 0x11b, Seq: seq}
		// Sent again each second until answered: the bridge's reader may
		// not have matched this writer yet when it is first written.
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); {
			if err := rq.Write(p.encode(typ+"_Request", req, &hdr)); err != nil {
				t.Fatal(err)
			}
			select {
			case v := <-replies:
				return v
			case <-time.After(time.Second):
			}
		}
		t.Fatalf("no reply on rr%sReply", service)
		return nil
	}
	got := call("/robot_7/saint/limb/neck/request_control", "saint_os/RequestControl", msg.RequestControlRequest{Client: "ros2-test", TimeoutMS: 2000}, 1)
	t.Logf("neck request_control: %v", got)
	uuid, _ := got["uuid"].(string)
	if got["success"] != true || uuid == "" {
		t.Fatalf("neck request_control %v, want a session", got)
	}
	rel := call("/robot_7/saint/limb/neck/release_control", "saint_os/ReleaseControl", msg.ReleaseControlRequest{UUID: uuid}, 2)
	if rel["success"] != true {
		t.Errorf("neck release_control %v", rel)
	}

	// None of the reference robot's roles is on DDS: a reader of a head,
	// arm, track, console or balance topic, a writer of one of their
	// commands, finds no bridge endpoint, while the same made at the same
	// time for the robot-wide names and the limbs do.
	type probe struct {
		name    string
		matched func() int
	}
	reader := func(topic, typ string) probe {
		_, r := p.subscribe(topic, typ)
		return probe{topic, r.MatchedWriters}
	}
	writer := func(topic, typ string) probe {
		m := p.message(typ)
		w, err := p.p.NewWriter("rt"+topic, m.DDSTypeName(), cyclone.QoS{Reliable: true})
		if err != nil {
			t.Fatal(err)
		}
		return probe{topic, w.MatchedReaders}
	}
	present := []probe{
		reader("/robot_7/saint/router/status", "saint_os/RouteStatus"),
		reader("/robot_7/session_status", "saint_os/SessionStatus"),
		reader("/robot_7/saint/limb/arm_left/session_status", "saint_os/SessionStatus"),
		writer("/robot_7/control_command", "saint_os/ControlCommand"),
		writer("/robot_7/saint/limb/neck/control_command", "saint_os/ControlCommand"),
	}
	absent := []probe{
		reader("/robot_7/saint/head/state", "saint_os/HeadState"),
		reader("/robot_7/saint/tracks/odom", "nav_msgs/Odometry"),
		reader("/robot_7/saint/arms/left/state", "saint_os/ArmState"),
		reader("/robot_7/saint/balance/state", "saint_os/BalanceState"),
		reader("/robot_7/saint/console/input", "saint_os/ConsoleInput"),
		reader("/robot_7/saint/head/joint_states", "sensor_msgs/JointState"),
		writer("/robot_7/saint/tracks/cmd_vel", "geometry_msgs/Twist"),
		writer("/robot_7/saint/head/cmd", "saint_os/HeadCommand"),
		writer("/robot_7/saint/arms/right/target_pose", "geometry_msgs/PoseStamped"),
	}
	for _, pr := range present {
		waitFor(t, 20*time.Second, "the bridge's endpoint of "+pr.name, func() bool { return pr.matched() > 0 })
	}
	// A second for an endpoint that should not exist to be discovered.
	time.Sleep(time.Second)
	for _, pr := range absent {
		if n := pr.matched(); n != 0 {
			t.Errorf("%s: %d bridge endpoints, but the humanoid has no such role", pr.name, n)
		}
	}
}

// --robot-type resolves in --config, else in the built-in robot
// configurations; a robot type that is not there is an error naming the
// ones that are.
func TestResolveRobot(t *testing.T) {
	resolve := func(args ...string) (*bringup.Robot, error) {
		fs := flag.NewFlagSet("saint-ros2", flag.ContinueOnError)
		robotType := bringup.RegisterFlags(fs)
		config := fs.String("config", "", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return resolveRobot(*config, robotType)
	}
	if r, err := resolve(); r != nil || err != nil {
		t.Errorf("no --robot-type: %v, %v; want no robot", r, err)
	}
	r, err := resolve("--robot-type", "pi_plus-S-12L8A0G2H0W")
	if err != nil || r.Type != "pi_plus-S-12L8A0G2H0W" {
		t.Fatalf("built-in humanoid: %v, %v", r, err)
	}
	if got := bridge.MotorNodesOf(r); len(got) != 5 || got[4] != "/saint/limb/neck" {
		t.Errorf("the humanoid's motor nodes %v", got)
	}
	if got := bridge.RolesOf(r); len(got) != 5 || got[0] != "/saint/limb/leg_left" {
		t.Errorf("the humanoid's roles %v", got)
	}
	if _, err := resolve("--robot-type", "pi_plus-S-12L8A0G9H0W"); err == nil || !strings.Contains(err.Error(), "pi_plus-S-12L8A0G2H0W") {
		t.Errorf("an unknown robot type: %v; want an error listing the available ones", err)
	}
	if _, err := resolve("--robot-type", "pi_plus-S-12L8A0G2H0W", "--config", t.TempDir()); err == nil {
		t.Error("a --config without the robot type resolved it")
	}
}
