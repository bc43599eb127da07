package bridge_test

import (
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
)

type rig struct {
	t   *testing.T
	ex  *executor.Executor
	bus bus.Bus
	dds *ddstest.DDS
	reg *ros2.Registry
	br  *bridge.Bridge
}

func newRig(t *testing.T, f bridge.Filter) *rig {
	t.Helper()
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	ex := bustest.RunExecutor(t)
	r := &rig{t: t, ex: ex, bus: mem.New(), dds: ddstest.New(), reg: reg}
	r.br, err = bridge.New(bridge.Options{Bus: r.bus, Exec: ex, DDS: r.dds, Registry: reg, Filter: f, CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.br.Stop)
	return r
}

func (r *rig) encode(typ string, v any, hdr *ros2.RequestHeader) []byte {
	r.t.Helper()
	m, ok := r.reg.Message(typ)
	if !ok {
		r.t.Fatalf("no %s", typ)
	}
	b, _ := json.Marshal(v)
	var obj map[string]any
	_ = json.Unmarshal(b, &obj)
	cdr, err := r.reg.Encode(m, obj, hdr)
	if err != nil {
		r.t.Fatal(err)
	}
	return cdr
}

// checkFor waits up to 5 s for ok.
func checkFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	bustest.WaitUntil(t, 5*time.Second, what, ok)
}

func (r *rig) routerInputs() chan msg.RouterInput {
	ch := make(chan msg.RouterInput, 16)
	if _, err := bus.SubscribeJSON(r.bus, msg.TopicRouterInput, bus.QoS{}, r.ex, func(_ string, in msg.RouterInput) { ch <- in }); err != nil {
		r.t.Fatal(err)
	}
	return ch
}

func TestTwistEntersTheRouterAsROS2(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	inputs := r.routerInputs()
	tw := msg.Twist{Linear: msg.Vector3{X: 0.5}, Angular: msg.Vector3{Z: -0.25}}
	if n := r.dds.Inject("rt/saint/tracks/cmd_vel", r.encode("geometry_msgs/Twist", tw, nil)); n != 1 {
		t.Fatalf("%d readers on rt/saint/tracks/cmd_vel, want 1", n)
	}
	select {
	case in := <-inputs:
		if in.Source != msg.SourceROS2 || in.Target != "tracks" || in.Command != "drive" || in.Values["linear"] != 0.5 || in.Values["angular"] != -0.25 {
			t.Errorf("router input %+v", in)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no router input")
	}
	if got := r.dds.Type("rt/saint/tracks/cmd_vel"); got != "geometry_msgs::msg::dds_::Twist_" {
		t.Errorf("cmd_vel type %q", got)
	}
}

func TestBadCommandsMoveNothing(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	inputs := r.routerInputs()
	nan := r.encode("geometry_msgs/Twist", msg.Twist{}, nil)
	for i := 4; i < 12; i++ {
		nan[i] = 0xff // linear.x: a NaN
	}
	for _, tc := range []struct {
		name, topic string
		cdr         []byte
	}{
		{"NaN twist", "rt/saint/tracks/cmd_vel", nan},
		{"too fast", "rt/saint/tracks/cmd_vel", r.encode("geometry_msgs/Twist", msg.Twist{Linear: msg.Vector3{X: 50}}, nil)},
		{"truncated", "rt/saint/tracks/cmd_vel", nan[:20]},
		{"head out of range", "rt/saint/head/cmd", r.encode("saint_os/HeadCommand", msg.HeadCommand{Tilt: 120}, nil)},
		{"arm without joints", "rt/saint/arms/left/cmd", r.encode("saint_os/ArmCommand", msg.ArmCommand{}, nil)},
	} {
		before := r.br.Stats().Rejected
		r.dds.Inject(tc.topic, tc.cdr)
		checkFor(t, tc.name+" to be rejected", func() bool { return r.br.Stats().Rejected == before+1 })
	}
	// A good command after the bad ones is the only one through.
	r.dds.Inject("rt/saint/head/cmd", r.encode("saint_os/HeadCommand", msg.HeadCommand{Pan: 10}, nil))
	select {
	case in := <-inputs:
		if in.Target != "head" || in.Values["pan"] != 10 {
			t.Errorf("router input %+v, want the head command", in)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no router input for the good command")
	}
	select {
	case in := <-inputs:
		t.Errorf("unexpected router input %+v", in)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestStateGoesOut(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	odom := msg.Odometry{Header: msg.Header{FrameID: "odom"}, ChildFrameID: "base_link"}
	odom.Twist.Twist.Linear.X = 0.8
	odom.Pose.Pose.Orientation = msg.IdentityQuaternion()
	if err := r.bus.Publish(msg.TopicTracksOdom, odom); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "odometry on DDS", func() bool { return len(r.dds.Written("rt/saint/tracks/odom")) == 1 })
	m, _ := r.reg.Message("nav_msgs/Odometry")
	v, _, err := r.reg.Decode(m, r.dds.Written("rt/saint/tracks/odom")[0])
	if err != nil {
		t.Fatal(err)
	}
	if v["child_frame_id"] != "base_link" || v["twist"].(map[string]any)["twist"].(map[string]any)["linear"].(map[string]any)["x"] != 0.8 {
		t.Errorf("odometry %v", v)
	}

	// A node's status goes to a topic named by its mapped id.
	if err := r.bus.Publish(msg.NodeStatusTopic("sim-head"), msg.NodeStatus{NodeID: "sim-head", State: msg.StateActive}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "node status on DDS", func() bool { return len(r.dds.Written("rt/saint/nodes/sim_2dhead/status")) == 1 })

	// Power becomes a BatteryState with NaN for what is not measured.
	if err := r.bus.Publish(msg.TopicTracksPower, msg.PowerState{Voltage: 24.5, Current: 3, Present: true}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "battery state on DDS", func() bool { return len(r.dds.Written("rt/saint/tracks/power")) == 1 })
	data := r.dds.Written("rt/saint/tracks/power")[0]
	// Decode refuses NaN, which BatteryState uses for unknowns: check the
	// bytes of voltage, temperature and current directly (after the
	// header: stamp 8, frame_id 5, padding 3).
	if got := math.Float32frombits(le32(data[4+16:])); got != 24.5 {
		t.Errorf("voltage %v, want 24.5", got)
	}
	if got := math.Float32frombits(le32(data[4+20:])); !math.IsNaN(float64(got)) {
		t.Errorf("temperature %v, want NaN", got)
	}
	if got := math.Float32frombits(le32(data[4+24:])); got != -3 {
		t.Errorf("current %v, want -3 (discharging)", got)
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func TestServices(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	var busKey atomic.Value // the bus_key the server was given
	if _, err := bus.ServeJSON(r.bus, msg.ServiceAdopt, r.ex, func(req msg.AdoptNodeRequest, reply func(msg.AdoptNodeResponse, error)) {
		busKey.Store(req.BusKey)
		reply(msg.AdoptNodeResponse{Success: true, Message: "adopted " + req.NodeID, AssignedTopicPrefix: msg.TopicPrefix(req.Role, req.Instance)}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	svc, _ := r.reg.Service("saint_os/AdoptNode")
	hdr := ros2.RequestHeader{GUID: 0xabcdef, Seq: 7}
	const key = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"
	r.dds.Inject("rq/saint/nodes/adoptRequest", r.encode("saint_os/AdoptNode_Request", msg.AdoptNodeRequest{NodeID: "sim-head", Role: "head", BusKey: key}, &hdr))
	checkFor(t, "the adopt reply", func() bool { return len(r.dds.Written("rr/saint/nodes/adoptReply")) == 1 })
	resp, gotHdr, err := r.reg.Decode(svc.Response, r.dds.Written("rr/saint/nodes/adoptReply")[0])
	if err != nil {
		t.Fatal(err)
	}
	if gotHdr != hdr || resp["success"] != true || resp["assigned_topic_prefix"] != "/saint/head" || resp["message"] != "adopted sim-head" {
		t.Errorf("reply %v header %+v, want success for sim-head with header %+v", resp, gotHdr, hdr)
	}
	// The key the administrator compared reaches the server, which
	// refuses the adoption if the node connects with another.
	if got, _ := busKey.Load().(string); got != key {
		t.Errorf("the server was given bus_key %q, want %q", got, key)
	}

	// A node that does not exist: a clear failure, not silence.
	probe, _ := r.reg.Service("saint_os/GPIOProbe")
	r.dds.Inject("rq/saint/nodes/gpio_probeRequest", r.encode("saint_os/GPIOProbe_Request", msg.GPIOProbeRequest{NodeID: "ghost"}, &hdr))
	checkFor(t, "the gpio_probe reply", func() bool { return len(r.dds.Written("rr/saint/nodes/gpio_probeReply")) == 1 })
	resp, _, err = r.reg.Decode(probe.Response, r.dds.Written("rr/saint/nodes/gpio_probeReply")[0])
	if err != nil {
		t.Fatal(err)
	}
	if resp["success"] != false || !strings.Contains(resp["message"].(string), "/saint/node/ghost/gpio_probe") {
		t.Errorf("probe of a missing node: %v", resp)
	}
	r.dds.Inject("rq/saint/nodes/gpio_probeRequest", r.encode("saint_os/GPIOProbe_Request", msg.GPIOProbeRequest{NodeID: "bad id!"}, &hdr))
	checkFor(t, "the second gpio_probe reply", func() bool { return len(r.dds.Written("rr/saint/nodes/gpio_probeReply")) == 2 })
	resp, _, _ = r.reg.Decode(probe.Response, r.dds.Written("rr/saint/nodes/gpio_probeReply")[1])
	if resp["success"] != false || !strings.Contains(resp["message"].(string), "node_id") {
		t.Errorf("probe with a bad id: %v", resp)
	}
}

func TestFilter(t *testing.T) {
	r := newRig(t, bridge.Filter{Deny: []string{"/saint/arms/**", "/saint/head/camera/*"}})
	if r.dds.Type("rt/saint/arms/left/state") != "" || r.dds.Type("rt/saint/head/camera/image_raw") != "" {
		t.Error("denied topics are bridged")
	}
	if r.dds.Type("rt/saint/head/state") == "" {
		t.Error("an allowed topic is not bridged")
	}
	only := newRig(t, bridge.Filter{Allow: []string{"/saint/tracks/*"}})
	if only.dds.Type("rt/saint/tracks/odom") == "" || only.dds.Type("rt/saint/head/state") != "" || only.dds.Type("rq/saint/nodes/adoptRequest") != "" {
		t.Error("allow list not applied")
	}
	if _, err := bridge.New(bridge.Options{Bus: r.bus, Exec: r.ex, DDS: r.dds, Filter: bridge.Filter{Deny: []string{"["}}}); err == nil {
		t.Error("a malformed pattern: no error")
	}
}

func TestNodeNames(t *testing.T) {
	for _, id := range []string{"sim-head", "pi_a1b2", "1abc", "n_31", "Head", "a-_-b", "x"} {
		seg := bridge.ROSNodeName(id)
		if strings.Contains(seg, "-") || strings.Contains(seg, "__") || seg[0] >= '0' && seg[0] <= '9' {
			t.Errorf("ROSNodeName(%q) = %q: not a valid ROS name segment", id, seg)
		}
		back, err := bridge.NodeID(seg)
		if err != nil || back != id {
			t.Errorf("NodeID(%q) = %q, %v; want %q", seg, back, err, id)
		}
	}
	if got := bridge.ROSNodeName("sim-head"); got != "sim_2dhead" {
		t.Errorf("sim-head → %q", got)
	}
	for _, bad := range []string{"a_zz", "a_", "a_3"} {
		if _, err := bridge.NodeID(bad); err == nil {
			t.Errorf("NodeID(%q): no error", bad)
		}
	}
}

func TestBalanceIMU(t *testing.T) {
	r := newRig(t, bridge.Filter{Allow: []string{"/saint/balance/**"}})
	if err := r.bus.Publish(msg.TopicBalanceState, msg.BalanceState{State: "armed", Pitch: 10, PitchRate: -30, YawRate: 0.5}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "the IMU and the state on DDS", func() bool {
		return len(r.dds.Written("rt/saint/balance/imu")) == 1 && len(r.dds.Written("rt/saint/balance/state")) == 1
	})
	m, _ := r.reg.Message("sensor_msgs/Imu")
	v, _, err := r.reg.Decode(m, r.dds.Written("rt/saint/balance/imu")[0])
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	q := v["orientation"].(map[string]any)
	if y, w := q["y"].(float64), q["w"].(float64); math.Abs(y-math.Sin(5*math.Pi/180)) > tol || math.Abs(w-math.Cos(5*math.Pi/180)) > tol {
		t.Errorf("orientation %v, want 10° of pitch about y", q)
	}
	av := v["angular_velocity"].(map[string]any)
	if y, z := av["y"].(float64), av["z"].(float64); math.Abs(y+30*math.Pi/180) > tol || z != 0.5 {
		t.Errorf("angular velocity %v, want y -30°/s in rad/s and z 0.5", av)
	}
	if c := v["linear_acceleration_covariance"].([]any); c[0] != -1.0 {
		t.Errorf("linear acceleration covariance[0] = %v, want -1 (no estimate)", c[0])
	}
	if h := v["header"].(map[string]any); h["frame_id"] != "base_link" {
		t.Errorf("frame %v", h["frame_id"])
	}
}

func TestHeadCameraCommand(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	inputs := r.routerInputs()
	r.dds.Inject("rt/saint/head/camera/cmd", r.encode("saint_os/HeadCameraCommand", msg.HeadCameraCommand{Enable: true}, nil))
	select {
	case in := <-inputs:
		if in.Source != msg.SourceROS2 || in.Target != "head" || in.Command != "camera" || in.Values["enable"] != 1 {
			t.Errorf("router input %+v, want the head camera on from ros2", in)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no router input")
	}
}

// TestTargetPoseEntersTheRouter: a geometry_msgs/PoseStamped on an arm's
// target_pose becomes a move of the router's arms.{side}.pose target, in
// the robot's frame or the arm's base frame; a frame it does not know, a
// quaternion that is not a unit one and a position out of bounds move
// nothing.
func TestTargetPoseEntersTheRouter(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	inputs := r.routerInputs()
	next := func() msg.RouterInput {
		t.Helper()
		select {
		case in := <-inputs:
			return in
		case <-time.After(5 * time.Second):
			t.Fatal("no router input")
		}
		return msg.RouterInput{}
	}
	const topic = "rt/saint/arms/left/target_pose"
	h := math.Sqrt(0.5)
	pose := msg.PoseStamped{Header: msg.Header{FrameID: "base_link"},
		Pose: msg.Pose{Position: msg.Point{X: 0.4, Y: 0.25, Z: 0.3}, Orientation: msg.Quaternion{W: h, Z: h}}}
	if n := r.dds.Inject(topic, r.encode("geometry_msgs/PoseStamped", pose, nil)); n != 1 {
		t.Fatalf("%d readers on %s, want 1", n, topic)
	}
	if got := r.dds.Type(topic); got != "geometry_msgs::msg::dds_::PoseStamped_" {
		t.Errorf("type %q", got)
	}
	in := next()
	want := map[string]float32{"x": 0.4, "y": 0.25, "z": 0.3, "qw": float32(h), "qx": 0, "qy": 0, "qz": float32(h), "base_frame": 0}
	if in.Source != msg.SourceROS2 || in.Target != "arms.left.pose" || in.Command != "move" || len(in.Values) != len(want) {
		t.Fatalf("router input %+v", in)
	}
	for k, v := range want {
		if math.Abs(float64(in.Values[k]-v)) > 1e-6 {
			t.Errorf("%s = %v, want %v", k, in.Values[k], v)
		}
	}

	// The arm's base frame, position only (an unset quaternion).
	base := msg.PoseStamped{Header: msg.Header{FrameID: bridge.ArmBaseFrame("right")}, Pose: msg.Pose{Position: msg.Point{X: 0.3}}}
	r.dds.Inject("rt/saint/arms/right/target_pose", r.encode("geometry_msgs/PoseStamped", base, nil))
	in = next()
	if in.Target != "arms.right.pose" || in.Values["base_frame"] != 1 || in.Values["x"] != 0.3 || len(in.Values) != 8 || in.Values["qw"] != 0 {
		t.Errorf("base-frame pose: router input %+v", in)
	}

	for _, bad := range []msg.PoseStamped{
		{Header: msg.Header{FrameID: "map"}, Pose: pose.Pose},
		{Header: msg.Header{FrameID: bridge.ArmBaseFrame("right")}, Pose: pose.Pose}, // the other arm's frame
		{Pose: msg.Pose{Position: pose.Pose.Position, Orientation: msg.Quaternion{W: 0.5}}},
		{Pose: msg.Pose{Position: msg.Point{X: 7}, Orientation: msg.Quaternion{W: 1}}},
	} {
		before := r.br.Stats().Rejected
		r.dds.Inject(topic, r.encode("geometry_msgs/PoseStamped", bad, nil))
		checkFor(t, "a bad target pose to be rejected", func() bool { return r.br.Stats().Rejected == before+1 })
	}
	select {
	case in := <-inputs:
		t.Errorf("a bad pose reached the router: %+v", in)
	case <-time.After(50 * time.Millisecond):
	}
}

// A ROS 2 client reaches the robot's motor middleware at the root: its
// request_control is the root's (so the router and the WebSocket clients
// share its sessions), and its control_command reaches the root's topic.
func TestRootMotorMiddleware(t *testing.T) {
	r := newRig(t, bridge.Filter{})
	got := make(chan msg.RequestControlRequest, 1)
	if _, err := bus.ServeJSON(r.bus, "/"+msg.MotorRequestControl, r.ex, func(req msg.RequestControlRequest, reply func(msg.RequestControlResponse, error)) {
		got <- req
		reply(msg.RequestControlResponse{Message: `motors of head are held by client "router (head)"`}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	cmds := make(chan msg.ControlCommand, 1)
	if _, err := bus.SubscribeJSON(r.bus, "/"+msg.MotorControlCommand, bus.QoS{}, r.ex, func(_ string, c msg.ControlCommand) { cmds <- c }); err != nil {
		t.Fatal(err)
	}
	hdr := ros2.RequestHeader{GUID: 1, Seq: 1}
	r.dds.Inject("rq/request_controlRequest", r.encode("saint_os/RequestControl_Request", msg.RequestControlRequest{Client: "ros", MotorIDs: []int{31}}, &hdr))
	checkFor(t, "the request_control reply", func() bool { return len(r.dds.Written("rr/request_controlReply")) == 1 })
	svc, _ := r.reg.Service("saint_os/RequestControl")
	resp, _, err := r.reg.Decode(svc.Response, r.dds.Written("rr/request_controlReply")[0])
	if err != nil {
		t.Fatal(err)
	}
	if req := <-got; req.Client != "ros" || len(req.MotorIDs) != 1 || req.MotorIDs[0] != 31 {
		t.Errorf("request at the root %+v", req)
	}
	if resp["success"] != false || !strings.Contains(resp["message"].(string), "router (head)") {
		t.Errorf("reply %v, want the root's refusal naming the router", resp)
	}
	r.dds.Inject("rt/control_command", r.encode("saint_os/ControlCommand", msg.ControlCommand{UUID: "u", Mode: msg.ModeVelocity, MotorIDs: []int{41, 42}, Velocities: []float64{1, 2}}, nil))
	select {
	case c := <-cmds:
		if c.UUID != "u" || c.Mode != msg.ModeVelocity || len(c.Velocities) != 2 || c.Velocities[1] != 2 {
			t.Errorf("control_command at the root %+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no control_command at the root")
	}
}
