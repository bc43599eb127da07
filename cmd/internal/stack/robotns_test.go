package stack

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

// With a robot id every name of the whole robot is inside /robot_7/ on the
// wire: the server's, the root middleware's (/robot_7/request_control),
// the node middlewares' (/robot_7/saint/arms/left/request_control), the
// nodes' own and the physics' — one namespace for all, applied by the bus.
// A tap on the broker below every namespace sees each subject published
// or requested while the robot is adopted, a session is taken and a
// command sent.
func TestEveryNameInTheRobotNamespace(t *testing.T) {
	seen := map[string]bool{}
	st, _, run := startRobot(t, testRobot{Type: "saint_can-T-0L10A2G3H0W", RobotID: "7",
		WaitActive: []string{"sim-arms-left", "sim-arms-right"},
		BeforeStart: func(st *Stack) {
			tap := st.Broker.Connect(nil)
			if _, err := tap.Transport().Subscribe(">", func(subject, _ string, _ []byte) { seen[subject] = true }); err != nil {
				t.Fatal(err)
			}
		}})
	run(time.Second)
	// A client outside the robot's processes uses the names on the wire.
	out := st.Broker.Connect(nil)
	var resp *msg.RequestControlResponse
	bus.CallAsyncJSON(out, "/robot_7/request_control", msg.RequestControlRequest{Client: "test", MotorIDs: []int{11}}, time.Minute, st.Exec,
		func(r msg.RequestControlResponse, err error) {
			if err != nil {
				t.Error(err)
			}
			resp = &r
		})
	run(500 * time.Millisecond)
	if resp == nil || !resp.Success {
		t.Fatalf("request_control at /robot_7/request_control: %+v", resp)
	}
	if err := out.Publish("/robot_7/control_command", msg.ControlCommand{UUID: resp.UUID, Mode: msg.ModePosition, MotorIDs: []int{11}, Positions: []float64{0.2}}); err != nil {
		t.Fatal(err)
	}
	run(time.Second)

	var subjects, outside []string
	for s := range seen {
		subjects = append(subjects, s)
		// Topics, services (the bus's "_srv." subjects), and the
		// callers' private reply inboxes, which carry no name.
		if !strings.HasPrefix(s, "robot_7.") && !strings.HasPrefix(s, "_srv.robot_7.") && !strings.HasPrefix(s, "_INBOX.") {
			outside = append(outside, s)
		}
	}
	slices.Sort(outside)
	if len(outside) > 0 {
		t.Errorf("%d of %d subjects outside robot_7: %v", len(outside), len(subjects), outside)
	}
	for _, want := range []struct {
		name    string
		service bool
	}{
		{"/request_control", true}, {"/control_command", false}, {"/joint_states", false}, {"/session_status", false},
		{"/saint/arms/left/request_control", true}, {"/saint/arms/left/control_command", false},
		{"/saint/arms/left/joint_states", false}, {"/saint/head/joint_states", false},
		{msg.TopicServerHeartbeat, false}, {msg.NodeStatusTopic("sim-tracks"), false}, {msg.TopicRouterStatus, false},
	} {
		subject, err := bus.TopicSubject("/robot_7"+want.name, false)
		if want.service {
			subject, err = bus.ServiceSubject("/robot_7" + want.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !seen[subject] {
			t.Errorf("nothing on %s (the robot's %s)", subject, want.name)
		}
	}
}
