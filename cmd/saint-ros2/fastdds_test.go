package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/cyclone"
)

// The Fast DDS client (testdata/fastdds/client.cpp), built once with type
// support fastddsgen generates from ros2/idl.
var fastdds struct {
	once sync.Once
	bin  string
	err  error
	skip string
}

func buildFastDDSClient(t *testing.T) string {
	t.Helper()
	fastdds.once.Do(func() {
		for _, tool := range []string{"fastddsgen", "g++"} {
			if _, err := exec.LookPath(tool); err != nil {
				fastdds.skip = tool + " not installed (make ros2-deps installs it)"
				return
			}
		}
		if _, err := os.Stat("/usr/include/fastdds/dds/domain/DomainParticipant.hpp"); err != nil {
			fastdds.skip = "Fast DDS headers not installed (make ros2-deps installs libfastrtps-dev)"
			return
		}
		dir := filepath.Join(buildBins(t), "fastdds")
		if fastdds.err = os.MkdirAll(dir, 0o755); fastdds.err != nil {
			return
		}
		idl, _ := filepath.Abs(filepath.Join("..", "..", "ros2", "idl"))
		gen := exec.Command("fastddsgen", "-d", dir, "-I", ".", "-replace",
			"builtin_interfaces.idl", "std_msgs.idl", "geometry_msgs.idl", "nav_msgs.idl", "sensor_msgs.idl", "saint_os.idl", "rosgraph_msgs.idl",
			"tf2_msgs.idl", "rmw_dds_common.idl")
		gen.Dir = idl
		if out, err := gen.CombinedOutput(); err != nil || strings.Contains(string(out), "ERROR") {
			fastdds.err = fmt.Errorf("fastddsgen: %v\n%s", err, out)
			return
		}
		src, _ := filepath.Abs(filepath.Join("testdata", "fastdds", "client.cpp"))
		cxx, _ := filepath.Glob(filepath.Join(dir, "*.cxx"))
		fastdds.bin = filepath.Join(dir, "client")
		args := append([]string{"-std=c++11", "-O0", "-I", dir, "-o", fastdds.bin, src}, cxx...)
		args = append(args, "-lfastrtps", "-lfastcdr")
		if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
			fastdds.err = fmt.Errorf("g++: %v\n%s", err, out)
		}
	})
	if fastdds.skip != "" {
		t.Skip(fastdds.skip)
	}
	if fastdds.err != nil {
		t.Fatal(fastdds.err)
	}
	return fastdds.bin
}

// client is the running Fast DDS client, driven line by line.
type client struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

func startClient(t *testing.T, bin string, domain uint32) *client {
	t.Helper()
	profile, _ := filepath.Abs(filepath.Join("testdata", "fastdds", "loopback.xml"))
	cmd := exec.Command(bin, profile, strconv.Itoa(int(domain)))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("the Fast DDS client did not exit")
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("Fast DDS client stderr:\n%s", stderr.String())
		}
	})
	return &client{t: t, in: in, out: bufio.NewScanner(out)}
}

// latchEStop sends the e-stop until the tracks' own state, over Fast DDS,
// says it is latched (rather than once, trusting a fixed wait for it to
// have arrived).
func (c *client) latchEStop() {
	c.t.Helper()
	polls := 0
	bustest.CheckFor(c.t, 15*time.Second, 100*time.Millisecond, func() error {
		if polls%5 == 0 { // again every half second, in case one was lost
			c.do("estop 1")
		}
		polls++
		if got := c.do("tracks"); len(got) < 4 || got[1] != "true" {
			return fmt.Errorf("the tracks' state never showed the e-stop latched: %v", got)
		}
		return nil
	})
}

// do sends one command and returns the reply's fields.
func (c *client) do(cmd string) []string {
	c.t.Helper()
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		c.t.Fatalf("%s: %v", cmd, err)
	}
	line := make(chan string, 1)
	go func() {
		if c.out.Scan() {
			line <- c.out.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			c.t.Fatalf("%s: the Fast DDS client exited", cmd)
		}
		return strings.Fields(l)
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no answer from the Fast DDS client", cmd)
	}
	return nil
}

// topics returns what `ros2 topic list` would list: the DDS topics of
// every remote writer and reader the client has discovered, once they
// include every name of want and a second has passed with nothing new.
func (c *client) topics(want map[string]bool) map[string]bool {
	c.t.Helper()
	list := func() map[string]bool {
		got := c.do("topics")
		if len(got) < 2 || got[0] != "topics" || got[1] != strconv.Itoa(len(got)-2) {
			c.t.Fatalf("topics: %v", got)
		}
		out := map[string]bool{}
		for _, n := range got[2:] {
			out[n] = true
		}
		return out
	}
	// The comparison below says what is missing if this runs out.
	_ = bustest.Poll(60*time.Second, 100*time.Millisecond, func() bool {
		got := list()
		for n := range want {
			if !got[n] {
				return false
			}
		}
		return true
	})
	got := list()
	for i := 0; i < 30; i++ {
		// Discovery has no end event: wait until the list stops growing.
		time.Sleep(time.Second)
		prev := got
		if got = list(); len(got) == len(prev) {
			break
		}
	}
	return got
}

// referenceNames are the DDS topics of the reference robot's bridge as
// ros2/bridge records them (its TestReferenceRobotBridgeIsUnchanged),
// and the robot model's (/robot_description, /tf, /tf_static), with the
// robot namespace ns ("/robot_7", "" for none): with limbs, the
// robot-wide ones alone and every limb's middleware names instead of the
// reference robot's roles.
func referenceNames(t *testing.T, ns string, limbs []string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "ros2", "bridge", "testdata", "reference_dds_topics.golden"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range strings.Fields(string(data)) {
		if limbs == nil || !underReferenceRole(n) {
			out[n[:2]+ns+n[2:]] = true
		}
	}
	// The robot's model, as robot_state_publisher and tf2 name it.
	for _, n := range []string{bridge.RobotDescriptionTopic, bridge.TFTopic, bridge.TFStaticTopic} {
		out["rt"+ns+n] = true
	}
	// ROS 2's graph topic, which every ROS 2 participant writes (no "rt",
	// no namespace).
	out[cyclone.GraphTopic] = true
	for _, l := range limbs {
		p := ns + "/saint/limb/" + l
		for _, n := range []string{"joint_states", "session_status", "control_command"} {
			out["rt"+p+"/"+n] = true
		}
		for _, n := range []string{"get_available_motors", "request_control", "release_control", "reset_zero"} {
			out["rq"+p+"/"+n+"Request"] = true
			out["rr"+p+"/"+n+"Reply"] = true
		}
	}
	return out
}

// underReferenceRole reports whether a DDS topic (without a robot
// namespace) is one of the reference robot's roles': the head's, an
// arm's, the tracks', the console's, the balancing base's.
func underReferenceRole(dds string) bool {
	for _, p := range bridge.DefaultRoles() {
		if strings.HasPrefix(dds[2:], p+"/") {
			return true
		}
	}
	return false
}

// checkTopics compares the DDS topics discovered with want; a node's
// status topic, which the bridge makes as the node first reports, is
// the only other name allowed.
func checkTopics(t *testing.T, got, want map[string]bool) {
	t.Helper()
	for n := range want {
		if !got[n] {
			t.Errorf("%s is not on DDS", n)
		}
	}
	for n := range got {
		if !want[n] && !(strings.HasPrefix(n, "rt/") && strings.Contains(n, "/saint/nodes/") && strings.HasSuffix(n, "/status")) {
			t.Errorf("%s is on DDS, not expected", n)
		}
	}
}

// checkGraph is what `ros2 node list` and `ros2 node info` read, from the
// Fast DDS client: the bridge's participant, with ROS 2's USER_DATA,
// announces on ros_discovery_info node saint_bridge in namespace ns, and
// its reader and writer GIDs are exactly the GUIDs, zero-padded to
// Humble's 24 bytes, of the bridge's endpoints the client discovered
// (but the graph writer, which belongs to no node). It then checks the
// robot's model: the URDF robotName on /robot_description and the
// fixed links on /tf_static, both latched.
func checkGraph(t *testing.T, c *client, ns, robotName string) {
	t.Helper()
	got := c.do("graph " + NodeName)
	t.Logf("Fast DDS, ros_discovery_info: %v", got)
	if len(got) != 9 || got[0] != "graph" {
		t.Fatalf("graph: %v", got)
	}
	if got[1] != ns || got[2] != NodeName {
		t.Errorf("node %s %s, want %s %s", got[1], got[2], ns, NodeName)
	}
	if got[3] == "0" || got[4] == "0" || got[5] != "0" || got[6] != "0" || got[7] != "true" {
		t.Errorf("node %s: %s readers, %s writers, %s GIDs of no endpoint discovered, %s endpoints not listed, GIDs padded: %s; "+
			"want the bridge's endpoints exactly", got[2], got[3], got[4], got[5], got[6], got[7])
	}
	if got[8] != cyclone.UserData {
		t.Errorf("the bridge participant's USER_DATA %q, want %q", got[8], cyclone.UserData)
	}
	nsArg := ns
	if ns == "/" {
		nsArg = "-"
	}
	got = c.do("description " + nsArg)
	if len(got) != 3 || got[0] != "description" || got[2] != robotName {
		t.Errorf("/robot_description: %v, want the URDF of robot %s", got, robotName)
	}
	got = c.do("tfstatic " + nsArg)
	if len(got) < 3 || got[0] != "tfstatic" || !slices.Contains(got[2:], "torso") {
		t.Errorf("/tf_static: %v, want the fixed links (torso …)", got)
	}
}

func float(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFastDDSInterop drives saint-sim --ros2 --adopt (at --speed 1) from a
// Fast DDS 2.9 participant: Twist in and Odometry out (a), HeadState after
// a head move over the WebSocket API (b), the adopt service with
// rmw_cyclonedds_cpp's request header (c), a PoseStamped target pose that
// puts the simulated left gripper there, seen in the ArmState it gets
// back (e), and the e-stop holding against its Twist (d). The topics it
// discovers are the reference robot's bridge's, as ros2/bridge records
// them: every role's, the root's and the robot-wide ones.
func TestFastDDSInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C++ client and runs the simulation")
	}
	bin := buildFastDDSClient(t)
	dir := buildBins(t)
	domain := loopbackDDS(t)
	addrs := proctest.Start(t, filepath.Join(dir, "saint-sim"), "--ros2", "--adopt", "--speed", "1",
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	c := startClient(t, bin, domain)
	if got := c.do("match"); len(got) == 0 || got[0] != "matched" {
		t.Fatalf("match: %v", got)
	}
	// The reference robot's bridge carries every name it always has: each
	// role's, the root's, the robot-wide ones.
	bridged := referenceNames(t, "", nil)
	bridged["rt/clock"] = true // the simulation's clock (docs/ros2.md, Time)
	names := c.topics(bridged)
	t.Logf("Fast DDS: %d topics discovered", len(names))
	checkTopics(t, names, bridged)
	checkGraph(t, c, "/", "saint")

	// (a)
	const speed = 0.3
	start := c.do("drive 0 0.3")
	got := c.do(fmt.Sprintf("drive %g 3", speed))
	if len(got) != 4 || got[0] != "odom" {
		t.Fatalf("drive: %v", got)
	}
	v, x, n := float(t, got[1]), float(t, got[2]), got[3]
	t.Logf("Fast DDS: odometry %.3f m/s, moved %.2f m (%s samples)", v, x-float(t, start[2]), n)
	if v < speed*0.9 || v > speed*1.1 {
		t.Errorf("odometry speed %.3f m/s after 3 s of Twist at %.1f m/s, want within 10 %%", v, speed)
	}
	if x-float(t, start[2]) < 0.5 {
		t.Errorf("odometry moved %.2f m in 3 s at %.1f m/s", x-float(t, start[2]), speed)
	}
	c.do("drive 0 1.5")

	// (b)
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addrs["ws"]+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteJSON(map[string]any{"id": "1", "type": "command", "target": "head", "action": "move",
		"params": map[string]any{"pan": 30.0, "speed": 1.0}}); err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := ws.ReadJSON(&resp); err != nil || resp["status"] != "ok" {
		t.Fatalf("head move over the WebSocket API: %v %v", resp, err)
	}
	bustest.CheckFor(t, 15*time.Second, 200*time.Millisecond, func() error {
		if pan := float(t, c.do("head")[1]); pan < 29 || pan > 31 {
			return fmt.Errorf("HeadState pan %.1f over Fast DDS after a move to 30 over the WebSocket API", pan)
		}
		return nil
	})

	// (c)
	got = c.do("adopt no-such-node head 987654321 3")
	if len(got) < 4 || got[0] != "adopt" {
		t.Fatalf("adopt: %v", got)
	}
	if got[1] != "false" || got[2] != "987654321" || got[3] != "3" || !strings.Contains(strings.Join(got, " "), "no-such-node") {
		t.Errorf("adopting a node that does not exist: %v; want success false, the request header echoed and the node named", got)
	}

	// (e) A pose the left arm reaches at known joint angles; the joints
	// the ArmState reports put the gripper there, within what the
	// position servos hold under load.
	arm := kinematics.DefaultArm("left")
	want := arm.Forward([]float64{0.3, 0.8, -1.1, 0.4, 0.2})
	q := mgl64.Mat4ToQuat(want.Rotation.Mat4())
	var off float64
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		c.do(fmt.Sprintf("pose %.6f %.6f %.6f %.7f %.7f %.7f %.7f 0.5", want.Position[0], want.Position[1], want.Position[2], q.W, q.V[0], q.V[1], q.V[2]))
		got := c.do("arm")
		if len(got) != kinematics.NumJoints+2 {
			continue // no ArmState yet
		}
		joints := make([]float64, kinematics.NumJoints)
		for i := range joints {
			joints[i] = float(t, got[1+i]) * math.Pi / 180
		}
		if off = arm.Forward(joints).Position.Sub(want.Position).Len(); off < 0.02 {
			break
		}
	}
	t.Logf("Fast DDS: target pose, gripper %.4f m from it", off)
	if off >= 0.02 {
		t.Errorf("after a PoseStamped over Fast DDS the left gripper is %.3f m from the target pose", off)
	}

	// (d)
	c.latchEStop()
	before := c.do("drive 0 0.3")
	got = c.do(fmt.Sprintf("drive %g 2", speed))
	v, x = float(t, got[1]), float(t, got[2])
	t.Logf("Fast DDS, e-stop latched: odometry %.3f m/s, moved %.3f m", v, x-float(t, before[2]))
	if v > 0.02 || x-float(t, before[2]) > 0.05 {
		t.Errorf("e-stop latched: odometry %.3f m/s, moved %.3f m under a Twist at %.1f m/s", v, x-float(t, before[2]), speed)
	}
}

// TestFastDDSHumanoid drives saint-sim --robot-type pi_plus-S-12L8A0G2H0W
// --robot-id 7 --ros2 --adopt from the Fast DDS client: each limb's node
// middleware, which alone drives it, is on DDS under /robot_7 — its
// sensor_msgs JointState arrives with the limb's joints, and its
// request_control answers with a session and the request header echoed;
// the topics it discovers, what `ros2 topic list` shows, are the limbs'
// and the robot-wide names and none of the reference robot's roles.
func TestFastDDSHumanoid(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C++ client and runs the simulation")
	}
	bin := buildFastDDSClient(t)
	dir := buildBins(t)
	domain := loopbackDDS(t)
	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--robot-type", "pi_plus-S-12L8A0G2H0W", "--robot-id", "7", "--ros2", "--adopt",
		"--speed", "1", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	c := startClient(t, bin, domain)
	for i, l := range []struct {
		limb   string
		joints string
		first  string
	}{
		{"leg_left", "6", "hip_pitch"},
		{"arm_right", "4", "shoulder_pitch"},
		{"neck", "2", "yaw"},
	} {
		seq := strconv.Itoa(i + 1)
		got := c.do("limb /robot_7 " + l.limb + " 424242 " + seq)
		t.Logf("Fast DDS, limb %s: %v", l.limb, got)
		if len(got) != 7 || got[0] != "limb" {
			t.Fatalf("limb %s: %v", l.limb, got)
		}
		if got[1] != l.joints || got[2] != l.first {
			t.Errorf("limb %s: JointState of %s joints from %s, want %s from %s", l.limb, got[1], got[2], l.joints, l.first)
		}
		if got[3] != "true" || got[4] != "424242" || got[5] != seq || got[6] == "-" {
			t.Errorf("limb %s: request_control %v, want success, the header 424242/%s echoed and a session uuid", l.limb, got[3:], seq)
		}
	}
	// What `ros2 topic list` shows: the limbs' middlewares and the
	// robot-wide names, none of the reference robot's head, arms, tracks,
	// console or balancing base.
	want := referenceNames(t, "/robot_7", []string{"leg_left", "leg_right", "arm_left", "arm_right", "neck"})
	want["rt/clock"] = true // the simulation's clock, the domain's, outside /robot_7
	names := c.topics(want)
	t.Logf("Fast DDS: %d topics discovered", len(names))
	for n := range names {
		if strings.HasPrefix(n[2:], "/robot_7/") && underReferenceRole(n[:2]+strings.TrimPrefix(n[2:], "/robot_7")) {
			t.Errorf("%s is on DDS, but the humanoid has no such role", n)
		}
	}
	checkTopics(t, names, want)
	checkGraph(t, c, "/robot_7", "pi_plus")
}

// TestFastDDSOverNATS is TestFastDDSInterop on the robot as it is
// deployed: saint-server with its NATS broker, saint-node processes on
// simulated boards, and saint-ros2 joining that broker. The Fast DDS
// client adopts the nodes itself, over the adopt service.
func TestFastDDSOverNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C++ client and runs the robot as processes")
	}
	bin := buildFastDDSClient(t)
	dir := buildBins(t)
	domain := loopbackDDS(t)
	root := t.TempDir()
	srv := proctest.Start(t, filepath.Join(dir, "saint-server"), "--data", filepath.Join(root, "server"), "--no-auth",
		"--nats", "127.0.0.1:0", "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--firmware-http", "127.0.0.1:0",
		"--livelink", "off")
	for _, n := range []struct{ id, hw string }{{"ros-tracks", "tracks"}, {"ros-head", "head"}} {
		startNode(t, filepath.Join(dir, "saint-node"), "--server", srv["nats"], "--hal", "sim", "--trust-first-server", "--sim-hw", n.hw,
			"--id", n.id, "--state-dir", filepath.Join(root, n.id))
	}
	proctest.Start(t, filepath.Join(dir, "saint-ros2"), "--nats", srv["nats"], "--nats-key", filepath.Join(root, "server", "bus", "ros2.nk"),
		"--nats-ca", filepath.Join(root, "server", "bus", "ca.pem"))
	c := startClient(t, bin, domain)
	if got := c.do("match"); len(got) == 0 || got[0] != "matched" {
		t.Fatalf("match: %v", got)
	}

	// (c) first: adopt the nodes over ROS 2.
	for i, n := range []struct{ id, role, prefix string }{{"ros-tracks", "tracks", "/saint/tracks"}, {"ros-head", "head", "/saint/head"}} {
		var got []string
		// A node that is still booting is not yet announcing itself.
		bustest.CheckFor(t, 30*time.Second, 500*time.Millisecond, func() error {
			if got = c.do(fmt.Sprintf("adopt %s %s 4242 %d", n.id, n.role, i*100+int(time.Now().UnixMilli()%100))); len(got) < 2 || got[1] != "true" {
				return fmt.Errorf("adopting %s over ROS 2: %v", n.id, got)
			}
			return nil
		})
		if len(got) < 5 || got[1] != "true" || got[2] != "4242" || !strings.HasPrefix(got[4], n.prefix+"|") {
			t.Fatalf("adopting %s over ROS 2: %v; want success, the header echoed and the prefix %s", n.id, got, n.prefix)
		}
	}

	// (a) The adopted tracks node publishes odometry; a simulated board
	// run alone has no physics (its encoders never turn), so the Twist is
	// followed into the router instead: its RouteStatus, over Fast DDS,
	// shows route ros2_direct sending the commanded speed to the tracks.
	// TestFastDDSInterop measures the motion itself.
	const speed = 0.3
	var got []string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		if got = c.do("drive 0 0.5"); got[3] != "0" {
			break
		}
	}
	if got[3] == "0" {
		t.Fatal("no odometry from the adopted tracks node")
	}
	c.do("route")
	c.do(fmt.Sprintf("drive %g 1.5", speed))
	got = c.do("route")
	t.Logf("Fast DDS over NATS, driving: %v", got)
	if len(got) < 4 || float(t, got[1]) < speed-0.001 || float(t, got[1]) > speed+0.001 || got[2] != "ros2_direct" || got[3] != "false" {
		t.Errorf("router status while driving at %.1f m/s over ROS 2: %v; want the tracks output at that speed from ros2_direct", speed, got)
	}
	if got = c.do("tracks"); len(got) < 4 || got[1] != "false" || got[3] == "0" {
		t.Errorf("TrackState while driving: %v; want the tracks node reporting no e-stop", got)
	}
	c.do("drive 0 1.5")

	// (b)
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+srv["ws"]+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteJSON(map[string]any{"id": "1", "type": "command", "target": "head", "action": "move",
		"params": map[string]any{"pan": -20.0, "speed": 1.0}}); err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := ws.ReadJSON(&resp); err != nil || resp["status"] != "ok" {
		t.Fatalf("head move over the WebSocket API: %v %v", resp, err)
	}
	bustest.CheckFor(t, 15*time.Second, 200*time.Millisecond, func() error {
		if pan := float(t, c.do("head")[1]); pan > -19 || pan < -21 {
			return fmt.Errorf("HeadState pan %.1f over Fast DDS after a move to -20 over the WebSocket API", pan)
		}
		return nil
	})

	// (d)
	c.latchEStop()
	c.do(fmt.Sprintf("drive %g 1.5", speed))
	got = c.do("tracks")
	t.Logf("Fast DDS over NATS, e-stop latched: %v", got)
	if len(got) < 4 || got[1] != "true" || got[2] != "false" || got[3] == "0" {
		t.Errorf("e-stop latched, Twist at %.1f m/s: TrackState %v; want the tracks node reporting the e-stop, motors disabled", speed, got)
	}
}

// startNode runs saint-node (which has no --addr-file) until the test
// ends; its log is shown if the test fails.
func startNode(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("saint-node %v log:\n%s", args, log.String())
		}
	})
}
