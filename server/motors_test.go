package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/motor"
)

// command sends {"type":"command","target":target,...} and returns the
// answer.
func (c *wsClient) command(target, action string, params any) response {
	c.t.Helper()
	return c.request("command", target, action, params)
}

// The root motor middleware over the WebSocket API: two clients, one arm;
// the second is refused while the first holds it, commands reach the arm's
// middleware, release frees it.
func TestMotorsOverWebSocket(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobot(t, func(string) bus.Bus { return broker.Connect(nil) }, nil)
	// The left arm's middleware, as the arms role serves it on its node.
	j, err := motor.ParseJoints([]byte("joint_names: [a, b]\nmap_index: [1, 2]\ndirection: [1, 1]\nlower: [-2, -2]\nupper: [2, 2]\nkp: [10, 10]\nkd: [1, 1]\nurdf_offset: [0, 0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := motor.New(motor.Options{Joints: j, TorqueControlled: true, MaxTorque: []float64{5, 5}})
	if err != nil {
		t.Fatal(err)
	}
	nb := broker.Connect(nil)
	var out []motor.Output
	if err := r.ex.Do(context.Background(), func() {
		if err := mw.Serve(nb, r.ex, msg.TopicPrefix(msg.RoleArms, msg.ArmLeft)); err != nil {
			t.Error(err)
		}
		r.ex.Every(20*time.Millisecond, func() { out, _ = mw.Update([]motor.Feedback{{Reachable: true}, {Reachable: true}}) })
	}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.ex.Do(context.Background(), mw.Close) }()

	addrs := r.srv.Addrs()
	a := dialWS(t, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	b := dialWS(t, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	var av msg.GetAvailableMotorsResponse
	bustest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		res := a.command("motors", msg.MotorGetAvailableMotors, nil)
		if err := json.Unmarshal(res.Data, &av); err != nil || len(av.MotorIDs) != 2 {
			return fmt.Errorf("get_available_motors: %s %s", res.Data, res.Message)
		}
		return nil
	})
	if av.MotorIDs[0] != 11 || av.JointNames[1] != "left_b" {
		t.Errorf("motors %+v", av)
	}
	var ga msg.RequestControlResponse
	res := a.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-a", TimeoutMS: 5000})
	if err := json.Unmarshal(res.Data, &ga); err != nil || !ga.Success {
		t.Fatalf("request_control: %s %s", res.Data, res.Message)
	}
	var gb msg.RequestControlResponse
	res = b.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-b"})
	if err := json.Unmarshal(res.Data, &gb); err != nil || gb.Success || !strings.Contains(gb.Message, `held by client "ws-a"`) {
		t.Errorf("second client: %s", res.Data)
	}
	if res = b.command("motors", msg.MotorControlCommand, msg.ControlCommand{UUID: "x", Positions: []float64{1, 1}}); res.Status == "ok" {
		t.Errorf("a command without the session's uuid: %+v", res)
	}
	if res = a.command("motors", msg.MotorControlCommand, msg.ControlCommand{UUID: ga.UUID, Mode: msg.ModePosition, Positions: []float64{0.4, -0.4}}); res.Status != "ok" {
		t.Fatalf("control_command: %+v", res)
	}
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		var got []motor.Output
		// Update's outputs are valid until the next Update: copy them
		// on the executor.
		_ = r.ex.Do(context.Background(), func() { got = slices.Clone(out) })
		if len(got) != 2 || got[0].Position != 0.4 || got[1].Position != -0.4 {
			return fmt.Errorf("the arm's outputs %+v", got)
		}
		return nil
	})
	var st msg.MotorsStatus
	res = b.command("motors", "status", nil)
	if err := json.Unmarshal(res.Data, &st); err != nil || len(st.Sessions) != 1 || st.Groups[0].HeldBy != "ws-a" {
		t.Errorf("status: %s", res.Data)
	}
	var rel msg.ReleaseControlResponse
	res = a.command("motors", msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: ga.UUID})
	if err := json.Unmarshal(res.Data, &rel); err != nil || !rel.Success {
		t.Errorf("release: %s", res.Data)
	}
	res = b.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-b"})
	if err := json.Unmarshal(res.Data, &gb); err != nil || !gb.Success {
		t.Errorf("second client after release: %s", res.Data)
	}
}

// A WebSocket client's session over a node whose middleware restarts:
// its next control_command is answered with an error saying the node
// restarted, the motors topic shows no session, and a fresh
// request_control is granted at the new middleware.
func TestMotorsNodeRestartOverWebSocket(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobot(t, func(string) bus.Bus { return broker.Connect(nil) }, nil)
	j, err := motor.ParseJoints([]byte("joint_names: [a, b]\nmap_index: [1, 2]\ndirection: [1, 1]\nlower: [-2, -2]\nupper: [2, 2]\nkp: [10, 10]\nkd: [1, 1]\nurdf_offset: [0, 0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	nb := broker.Connect(nil)
	var mw *motor.Middleware
	// start runs a fresh middleware for the left arm, as its node's
	// process starting does (executor).
	start := func() {
		if mw != nil {
			mw.Close()
		}
		var err error
		if mw, err = motor.New(motor.Options{Joints: j, TorqueControlled: true, MaxTorque: []float64{5, 5}}); err != nil {
			t.Error(err)
			return
		}
		if err := mw.Serve(nb, r.ex, msg.TopicPrefix(msg.RoleArms, msg.ArmLeft)); err != nil {
			t.Error(err)
		}
	}
	if err := r.ex.Do(context.Background(), func() {
		start()
		r.ex.Every(20*time.Millisecond, func() {
			_, _ = mw.Update([]motor.Feedback{{Reachable: true}, {Reachable: true}})
			mw.PublishState()
		})
	}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.ex.Do(context.Background(), func() { mw.Close() }) }()

	a := dialWS(t, "ws://"+r.srv.Addrs()["ws"]+"/saint", r.srv.Token())
	var ga msg.RequestControlResponse
	bustest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		res := a.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-a", TimeoutMS: 5000})
		if err := json.Unmarshal(res.Data, &ga); err != nil || !ga.Success {
			return fmt.Errorf("request_control: %s %s", res.Data, res.Message)
		}
		return nil
	})
	command := func() response {
		return a.command("motors", msg.MotorControlCommand, msg.ControlCommand{UUID: ga.UUID, Mode: msg.ModePosition, Positions: []float64{0.1, 0.2}})
	}
	if res := command(); res.Status != "ok" {
		t.Fatalf("control_command before the restart: %+v", res)
	}
	if err := r.ex.Do(context.Background(), start); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if res := command(); res.Status == "ok" || !strings.Contains(res.Message, "the session ended (the node of arms_left restarted") {
			return fmt.Errorf("control_command after the restart: %+v", res)
		}
		return nil
	})
	var st msg.MotorsStatus
	if res := a.command("motors", "status", nil); json.Unmarshal(res.Data, &st) != nil || len(st.Sessions) != 0 || st.Groups[0].HeldBy != "" {
		t.Errorf("status after the restart: %s", res.Data)
	}
	res := a.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-a", TimeoutMS: 5000})
	if err := json.Unmarshal(res.Data, &ga); err != nil || !ga.Success {
		t.Fatalf("a fresh request_control after the restart: %s %s", res.Data, res.Message)
	}
	if res := command(); res.Status != "ok" {
		t.Errorf("control_command under the fresh session: %+v", res)
	}
}

// The router and a WebSocket client never drive the head's motors at the
// same time: while the client holds a session on them, the router's route
// to the head sends no HeadCommand; once the client releases, the route
// drives the head and holds its motors, and the client is refused them
// naming the router.
func TestRouterAndSessionExclusive(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobot(t, func(string) bus.Bus { return broker.Connect(nil) }, nil)
	// The head's middleware, as the head role serves it on its node.
	j, err := motor.ParseJoints([]byte("joint_names: [pan, tilt, roll]\nmap_index: [1, 2, 3]\ndirection: [1, 1, 1]\nlower: [-2, -2, -2]\nupper: [2, 2, 2]\nkp: [0, 0, 0]\nkd: [0, 0, 0]\nurdf_offset: [0, 0, 0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := motor.New(motor.Options{Joints: j, MaxTorque: []float64{1, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	nb := broker.Connect(nil)
	var owns bool
	if err := r.ex.Do(context.Background(), func() {
		if err := mw.Serve(nb, r.ex, msg.TopicPrefix(msg.RoleHead, "")); err != nil {
			t.Error(err)
		}
		fb := []motor.Feedback{{Reachable: true}, {Reachable: true}, {Reachable: true}}
		r.ex.Every(20*time.Millisecond, func() { _, owns = mw.Update(fb) })
	}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.ex.Do(context.Background(), mw.Close) }()
	var heads bustest.Recorder
	if _, err := nb.Subscribe(msg.TopicHeadCmd, bus.QoS{Depth: 1000}, bustest.RunExecutor(t), heads.Handler); err != nil {
		t.Fatal(err)
	}
	panned := func(pan float32) int {
		n := 0
		for _, m := range heads.Msgs() {
			var h msg.HeadCommand
			if json.Unmarshal(m.Data, &h) == nil && h.Pan == pan {
				n++
			}
		}
		return n
	}

	addrs := r.srv.Addrs()
	a := dialWS(t, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	b := dialWS(t, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	var ga msg.RequestControlResponse
	bustest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		res := a.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-a", MotorIDs: []int{31}, TimeoutMS: 10000})
		if err := json.Unmarshal(res.Data, &ga); err != nil || !ga.Success {
			return fmt.Errorf("request_control on the head: %s %s", res.Data, res.Message)
		}
		return nil
	})
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		var o bool
		_ = r.ex.Do(context.Background(), func() { o = owns })
		if !o {
			return errors.New("the head's middleware does not own its motors")
		}
		return nil
	})

	// The client holds the head: the router's route to it sends nothing.
	b.command("head", "move", map[string]any{"pan": 45, "speed": 1})
	time.Sleep(300 * time.Millisecond) // a HeadCommand would be out by now
	if n := panned(45); n != 0 {
		t.Fatalf("%d HeadCommands to pan 45 while a client holds the head", n)
	}

	// Released, the route drives the head and holds it.
	res := a.command("motors", msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: ga.UUID})
	if res.Status != "ok" {
		t.Fatalf("release: %+v", res)
	}
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		b.command("head", "move", map[string]any{"pan": 40, "speed": 1})
		if panned(40) == 0 {
			return errors.New("no HeadCommand to pan 40 after the client released the head")
		}
		return nil
	})
	res = a.command("motors", msg.MotorRequestControl, msg.RequestControlRequest{Client: "ws-a", MotorIDs: []int{31}})
	if err := json.Unmarshal(res.Data, &ga); err != nil || ga.Success || !strings.Contains(ga.Message, `router (head)`) {
		t.Errorf("request_control while the router drives the head: %s %s, want refused naming the router", res.Data, res.Message)
	}
	var st msg.MotorsStatus
	res = a.command("motors", "status", nil)
	if err := json.Unmarshal(res.Data, &st); err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Groups {
		if g.Name == "head" && g.HeldBy != "router (head)" {
			t.Errorf("the head is held by %q, want the router", g.HeldBy)
		}
	}
}
