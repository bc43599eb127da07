package stack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/motors"
)

// The whole robot: a client holds the head and the left arm at the root;
// the head's node process restarts. The root ends the session (node_lost,
// naming the head), the left arm's node session is released, the
// client's next command is refused saying why, and the head comes back in
// its role with no session until a fresh request_control.
func TestNodeRestartEndsRootSession(t *testing.T) {
	st := startAdopted(t)
	run := func(d time.Duration) {
		t.Helper()
		if err := st.Exec.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	b := st.Broker.Connect(nil)
	var root []msg.SessionStatus
	if _, err := bus.SubscribeJSON(b, "/"+msg.MotorSessionStatus, bus.QoS{Depth: 64}, st.Exec, func(_ string, s msg.SessionStatus) { root = append(root, s) }); err != nil {
		t.Fatal(err)
	}
	node := map[string]msg.SessionStatus{}
	for _, prefix := range []string{"/saint/head", "/saint/arms/left"} {
		if _, err := bus.SubscribeJSON(b, prefix+"/"+msg.MotorSessionStatus, bus.QoS{Depth: 64}, st.Exec, func(_ string, s msg.SessionStatus) { node[prefix] = s }); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string, req, resp any) {
		t.Helper()
		done := false
		bus.CallAsyncJSON(b, name, req, 5*time.Second, st.Exec, func(r json.RawMessage, err error) {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if err := json.Unmarshal(r, resp); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			done = true
		})
		for i := 0; i < 100 && !done; i++ {
			run(20 * time.Millisecond)
		}
		if !done {
			t.Fatalf("%s: no answer", name)
		}
	}
	var req msg.RequestControlResponse
	for range 10 {
		call("/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "ui", MotorIDs: []int{31, 11}, TimeoutMS: 5000}, &req)
		if req.Success {
			break
		}
		run(500 * time.Millisecond)
	}
	if !req.Success {
		t.Fatalf("request_control of the head and the left arm: %+v", req)
	}
	command := func(uuid string) {
		_ = b.Publish("/"+msg.MotorControlCommand, msg.ControlCommand{UUID: uuid, Mode: msg.ModePosition, MotorIDs: []int{31}, Positions: []float64{0.2}})
		run(100 * time.Millisecond)
	}
	command(req.UUID)
	if s := node["/saint/head"]; s.State != "active" || s.Commands == 0 {
		t.Fatalf("the head's node session before the restart: %+v", s)
	}
	from := len(root)
	if err := st.RestartNode("head"); err != nil {
		t.Fatal(err)
	}
	run(3 * time.Second)
	var lost *msg.SessionStatus
	for i := from; i < len(root); i++ {
		if root[i].State == motors.StateNodeLost {
			lost = &root[i]
			break
		}
	}
	if lost == nil || lost.Client != "ui" || !strings.Contains(lost.LastError, "the node of head restarted") {
		t.Fatalf("root session_status after the head's node restarted: %+v, want node_lost naming the head", root[from:])
	}
	if s := root[len(root)-1]; len(s.Sessions) != 0 {
		t.Errorf("root sessions after the restart: %+v", s.Sessions)
	}
	if s := node["/saint/arms/left"]; s.State == "active" {
		t.Errorf("the left arm's node session outlived the root session: %+v", s)
	}
	command(req.UUID)
	if s := root[len(root)-1]; !strings.Contains(s.LastError, "the session ended (the node of head restarted") {
		t.Errorf("the client's command after the restart: last_error %q", s.LastError)
	}
	run(2 * time.Second)
	if s, ok := node["/saint/head"]; !ok || s.State == "active" || s.Commands != 0 {
		t.Errorf("the restarted head's node session: %+v, want none resumed", s)
	}
	call("/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "ui", MotorIDs: []int{31}, TimeoutMS: 5000}, &req)
	if !req.Success {
		t.Fatalf("a fresh request_control of the restarted head: %+v", req)
	}
	command(req.UUID)
	if s := node["/saint/head"]; s.State != "active" || s.Client != "saint-server for ui" || s.Commands == 0 {
		t.Errorf("the restarted head under the fresh session: %+v", s)
	}
}

// The whole robot: the left arm's node is cut off the bus (its network
// cable pulled) under a client's session. The root ends the session once
// the node stops answering (node_lost, naming it); the node, which no
// command reaches, times its own session out; reconnected, it has no
// session until a fresh request_control.
func TestNodeOfflineEndsRootSession(t *testing.T) {
	st := startAdopted(t)
	run := func(d time.Duration) {
		t.Helper()
		if err := st.Exec.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	b := st.Broker.Connect(nil)
	var root []msg.SessionStatus
	if _, err := bus.SubscribeJSON(b, "/"+msg.MotorSessionStatus, bus.QoS{Depth: 64}, st.Exec, func(_ string, s msg.SessionStatus) { root = append(root, s) }); err != nil {
		t.Fatal(err)
	}
	var arm msg.SessionStatus
	if _, err := bus.SubscribeJSON(b, "/saint/arms/left/"+msg.MotorSessionStatus, bus.QoS{Depth: 64}, st.Exec, func(_ string, s msg.SessionStatus) { arm = s }); err != nil {
		t.Fatal(err)
	}
	request := func() msg.RequestControlResponse {
		t.Helper()
		var resp *msg.RequestControlResponse
		bus.CallAsyncJSON(b, "/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{11}, TimeoutMS: 1000}, 5*time.Second, st.Exec, func(r msg.RequestControlResponse, err error) {
			if err != nil {
				t.Error(err)
			}
			resp = &r
		})
		for i := 0; i < 100 && resp == nil; i++ {
			run(20 * time.Millisecond)
		}
		if resp == nil {
			t.Fatal("request_control: no answer")
		}
		return *resp
	}
	req := request()
	for i := 0; i < 10 && !req.Success; i++ {
		run(500 * time.Millisecond)
		req = request()
	}
	if !req.Success {
		t.Fatalf("request_control of the left arm: %+v", req)
	}
	from := len(root)
	if err := st.CutNode("arms_left", true); err != nil {
		t.Fatal(err)
	}
	run(motors.PollInterval + motors.CallTimeout + 200*time.Millisecond)
	var lost *msg.SessionStatus
	for i := from; i < len(root); i++ {
		if root[i].State == motors.StateNodeLost {
			lost = &root[i]
			break
		}
	}
	if lost == nil || !strings.Contains(lost.LastError, "the node of arms_left went offline") {
		t.Fatalf("root session_status with the left arm cut off: %+v, want node_lost naming arms_left", root[from:])
	}
	if err := st.CutNode("arms_left", false); err != nil {
		t.Fatal(err)
	}
	run(time.Second)
	if arm.State == "active" {
		t.Errorf("the left arm's node session after it was reconnected: %+v, want timed out on its own", arm)
	}
	if s := root[len(root)-1]; len(s.Sessions) != 0 {
		t.Errorf("root sessions after the left arm came back: %+v, want none resumed", s.Sessions)
	}
	if again := request(); !again.Success {
		t.Errorf("a fresh request_control after the left arm came back: %+v", again)
	}
}
