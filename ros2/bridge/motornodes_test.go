package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
	"github.com/saint-os/saint/server/motors"
)

const humanoid = "pi_plus-S-12L8A0G2H0W"

func TestMotorNodesOfTheHumanoid(t *testing.T) {
	robot, err := bringup.Resolve(fixtures.Config(), humanoid)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(bridge.MotorNodesOf(robot), " ")
	want := "/saint/limb/leg_left /saint/limb/leg_right /saint/limb/arm_left /saint/limb/arm_right /saint/limb/neck"
	if got != want {
		t.Errorf("MotorNodesOf(%s) = %s, want %s", humanoid, got, want)
	}
	if got := bridge.MotorNodesOf(nil); strings.Join(got, " ") != strings.Join(bridge.DefaultMotorNodes(), " ") {
		t.Errorf("MotorNodesOf(nil) = %v, want the default groups", got)
	}
}

// The bridge's default groups are the root middleware's, and a robot
// configuration gives both the same ones.
func TestMotorNodesAreTheRootMiddlewaresGroups(t *testing.T) {
	prefixes := func(gs []motors.Group) string {
		var out []string
		for _, g := range gs {
			out = append(out, g.Prefix)
		}
		return strings.Join(out, " ")
	}
	if got, want := strings.Join(bridge.DefaultMotorNodes(), " "), prefixes(motors.DefaultGroups()); got != want {
		t.Errorf("DefaultMotorNodes %s, want the root middleware's default groups %s", got, want)
	}
	for _, rt := range bringup.Available(fixtures.Config()) {
		robot, err := bringup.Resolve(fixtures.Config(), rt)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(bridge.MotorNodesOf(robot), " "), prefixes(motors.GroupsOf(robot)); got != want {
			t.Errorf("%s: MotorNodesOf %s, want the root middleware's groups %s", rt, got, want)
		}
	}
}

func TestMotorNodesRefusesBadPrefixes(t *testing.T) {
	for _, nodes := range [][]string{
		{"saint/limb/neck"},
		{"/saint/limb/neck/"},
		{"/saint/limb/neck/extra/deep"},
		{"/other/limb"},
		{"/saint/limb/neck", "/saint/limb/neck"},
		{"/saint/limb/9neck"},
	} {
		_, err := bridge.New(bridge.Options{Bus: mem.New(), Exec: executor.New(nil), DDS: ddstest.New(), MotorNodes: nodes})
		if err == nil || !strings.Contains(err.Error(), "MotorNodes[") {
			t.Errorf("MotorNodes %q: err %v, want one naming the entry", nodes, err)
		}
	}
}

// The humanoid's five limb nodes are driven through their middlewares
// alone: with its motor groups the bridge carries each limb's
// middleware names inside the robot namespace — joint_states out, a
// request_control call and its reply, control_command in — and not the
// reference robot's head (its middleware, its state), which this robot
// has not.
func TestHumanoidLimbMiddlewares(t *testing.T) {
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	robot, err := bringup.Resolve(fixtures.Config(), humanoid)
	if err != nil {
		t.Fatal(err)
	}
	ex := bustest.RunExecutor(t)
	outside := mem.New()
	inner, err := bus.WithRobotID(outside.Broker().Connect(nil), "7")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ex: ex, bus: inner, dds: ddstest.New(), reg: reg}
	r.br, err = bridge.New(bridge.Options{Bus: inner, Exec: ex, DDS: r.dds, Registry: reg, RobotID: "7",
		Roles: bridge.RolesOf(robot), MotorNodes: bridge.MotorNodesOf(robot), CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.br.Stop)

	for _, limb := range []string{"leg_left", "leg_right", "arm_left", "arm_right", "neck"} {
		for _, name := range []string{"joint_states", "session_status"} {
			if typ := r.dds.Type("rt/robot_7/saint/limb/" + limb + "/" + name); typ == "" {
				t.Errorf("no DDS topic rt/robot_7/saint/limb/%s/%s", limb, name)
			}
		}
		for _, name := range []string{"request_control", "release_control", "reset_zero", "get_available_motors"} {
			if typ := r.dds.Type("rq/robot_7/saint/limb/" + limb + "/" + name + "Request"); typ == "" {
				t.Errorf("no DDS service rq/robot_7/saint/limb/%s/%sRequest", limb, name)
			}
		}
	}
	for _, absent := range []string{"rt/robot_7/saint/head/joint_states", "rq/robot_7/saint/head/request_controlRequest", "rt/robot_7/saint/head/state"} {
		if typ := r.dds.Type(absent); typ != "" {
			t.Errorf("%s bridged (%s), but the humanoid has no head group", absent, typ)
		}
	}

	// joint_states of the left leg, on the wire under /robot_7.
	js := msg.JointStates{Name: []string{"hip_pitch", "knee"}, Position: []float64{-0.6, 1.2}, Velocity: []float64{0, 0}, Effort: []float64{0, 0}}
	if err := outside.Publish("/robot_7/saint/limb/leg_left/joint_states", js); err != nil {
		t.Fatal(err)
	}
	const jsTopic = "rt/robot_7/saint/limb/leg_left/joint_states"
	checkFor(t, "joint_states on "+jsTopic, func() bool { return len(r.dds.Written(jsTopic)) == 1 })
	m, _ := reg.Message("sensor_msgs/JointState")
	v, _, err := reg.Decode(m, r.dds.Written(jsTopic)[0])
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := v["name"].([]any); len(names) != 2 || names[1] != "knee" {
		t.Errorf("joint_states on DDS %v", v)
	}

	// request_control at the neck's node middleware.
	got := make(chan msg.RequestControlRequest, 1)
	if _, err := bus.ServeJSON(outside, "/robot_7/saint/limb/neck/"+msg.MotorRequestControl, ex, func(req msg.RequestControlRequest, reply func(msg.RequestControlResponse, error)) {
		got <- req
		reply(msg.RequestControlResponse{Success: true, UUID: "neck-session"}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	r.dds.Inject("rq/robot_7/saint/limb/neck/request_controlRequest",
		r.encode("saint_os/RequestControl_Request", msg.RequestControlRequest{Client: "ros", TimeoutMS: 500}, &ros2.RequestHeader{GUID: 1, Seq: 3}))
	const reply = "rr/robot_7/saint/limb/neck/request_controlReply"
	checkFor(t, "the reply on "+reply, func() bool { return len(r.dds.Written(reply)) == 1 })
	svc, _ := reg.Service("saint_os/RequestControl")
	resp, hdr, err := reg.Decode(svc.Response, r.dds.Written(reply)[0])
	if err != nil {
		t.Fatal(err)
	}
	if req := <-got; req.Client != "ros" || req.TimeoutMS != 500 {
		t.Errorf("request at the neck %+v", req)
	}
	if resp["success"] != true || resp["uuid"] != "neck-session" || hdr.Seq != 3 {
		t.Errorf("reply %v (header %+v), want the neck's session", resp, hdr)
	}

	// control_command in, to the right arm's middleware.
	cmds := make(chan msg.ControlCommand, 1)
	if _, err := bus.SubscribeJSON(outside, "/robot_7/saint/limb/arm_right/control_command", bus.QoS{}, ex, func(_ string, c msg.ControlCommand) { cmds <- c }); err != nil {
		t.Fatal(err)
	}
	cc := msg.ControlCommand{UUID: "u", Mode: msg.ModePosition, MotorIDs: []int{4}, Positions: []float64{-0.5}}
	if n := r.dds.Inject("rt/robot_7/saint/limb/arm_right/control_command", r.encode("saint_os/ControlCommand", cc, nil)); n != 1 {
		t.Fatalf("%d readers of the right arm's control_command, want 1", n)
	}
	select {
	case c := <-cmds:
		if c.UUID != "u" || len(c.Positions) != 1 || c.Positions[0] != -0.5 {
			t.Errorf("control_command %+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no control_command at the right arm's middleware")
	}

	// The relay of saint-sim carries the same names.
	e := bridge.BusEndpoints(bridge.RolesOf(robot), bridge.MotorNodesOf(robot))
	for _, want := range []string{"/saint/limb/neck/joint_states", "/saint/limb/neck/control_command", "/saint/limb/neck/request_control"} {
		if !strings.Contains(strings.Join(append(append(e.Out, e.In...), e.Services...), " "), want) {
			t.Errorf("BusEndpoints of the humanoid lack %s", want)
		}
	}
}
