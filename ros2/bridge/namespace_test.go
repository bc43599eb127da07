package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
)

// With a robot id every ROS 2 name the bridge makes is under /robot_7/ —
// topics, node statuses, services, commands in — and every bus name it
// uses is under /robot_7/ on the wire: the bridge's bus is inside the
// robot namespace, and the test's peers outside it use the wire names.
func TestRobotNamespaceOnEveryROS2Name(t *testing.T) {
	reg, err := ros2.Load()
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
	if _, err := bridge.New(bridge.Options{Bus: inner, Exec: ex, DDS: r.dds, Registry: reg, RobotID: "a/b"}); err == nil {
		t.Error("a robot id of two name segments was accepted")
	}
	r.br, err = bridge.New(bridge.Options{Bus: inner, Exec: ex, DDS: r.dds, Registry: reg, RobotID: "7", CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.br.Stop)

	// State out: a bus topic of robot 7 becomes its ROS 2 topic.
	if err := outside.Publish("/robot_7"+msg.TopicTracksOdom, msg.Odometry{ChildFrameID: "base_link", Pose: msg.PoseWithCovariance{Pose: msg.Pose{Orientation: msg.IdentityQuaternion()}}}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "odometry on rt/robot_7/saint/tracks/odom", func() bool { return len(r.dds.Written("rt/robot_7/saint/tracks/odom")) == 1 })
	if err := outside.Publish("/robot_7"+msg.NodeStatusTopic("sim-head"), msg.NodeStatus{NodeID: "sim-head", State: msg.StateActive}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "the node status on rt/robot_7/saint/nodes/sim_2dhead/status", func() bool {
		return len(r.dds.Written("rt/robot_7/saint/nodes/sim_2dhead/status")) == 1
	})

	// A command in: a client's control_command reaches robot 7's arm.
	got := make(chan msg.ControlCommand, 1)
	if _, err := bus.SubscribeJSON(outside, "/robot_7/saint/arms/left/control_command", bus.QoS{}, ex, func(_ string, c msg.ControlCommand) { got <- c }); err != nil {
		t.Fatal(err)
	}
	cc := msg.ControlCommand{UUID: "u", Mode: msg.ModePosition, MotorIDs: []int{1}, Positions: []float64{0.25}}
	if n := r.dds.Inject("rt/robot_7/saint/arms/left/control_command", r.encode("saint_os/ControlCommand", cc, nil)); n != 1 {
		t.Fatalf("%d readers on rt/robot_7/saint/arms/left/control_command, want 1", n)
	}
	select {
	case c := <-got:
		if c.UUID != "u" || len(c.Positions) != 1 || c.Positions[0] != 0.25 {
			t.Errorf("control_command %+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no control_command on /robot_7/saint/arms/left/control_command")
	}

	// A service: the ROS 2 request under /robot_7 calls robot 7's service.
	if _, err := bus.ServeJSON(outside, "/robot_7"+msg.ServiceAdopt, ex, func(req msg.AdoptNodeRequest, reply func(msg.AdoptNodeResponse, error)) {
		reply(msg.AdoptNodeResponse{Success: true, Message: "adopted " + req.NodeID}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	r.dds.Inject("rq/robot_7/saint/nodes/adoptRequest", r.encode("saint_os/AdoptNode_Request", msg.AdoptNodeRequest{NodeID: "sim-head", Role: "head"}, &ros2.RequestHeader{Seq: 1}))
	checkFor(t, "the adopt reply on rr/robot_7/saint/nodes/adoptReply", func() bool { return len(r.dds.Written("rr/robot_7/saint/nodes/adoptReply")) == 1 })

	// And nothing of the robot is outside its namespace on the DDS side.
	topics := r.dds.Topics()
	if len(topics) < 20 {
		t.Fatalf("only %d DDS topics: %v", len(topics), topics)
	}
	for _, name := range topics {
		if !strings.HasPrefix(name[2:], "/robot_7/") {
			t.Errorf("DDS topic %s is outside /robot_7/", name)
		}
	}
}
