package server_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	simboard "github.com/saint-os/saint/sim/board"
)

// watch collects a bus topic's messages for the test.
func watch(t *testing.T, r *robot, b bus.Bus, topic string) chan json.RawMessage {
	t.Helper()
	ch := make(chan json.RawMessage, 4096)
	sub, err := b.Subscribe(topic, bus.QoS{Depth: 4096}, r.ex, func(m bus.Msg) {
		select {
		case ch <- json.RawMessage(m.Data):
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

// expect waits for a message on ch that decodes into v and satisfies ok.
func expect[T any](t *testing.T, ch chan json.RawMessage, what string, ok func(T) bool) T {
	t.Helper()
	deadline := time.After(10 * time.Second)
	var last T
	for {
		select {
		case data := <-ch:
			var v T
			if json.Unmarshal(data, &v) == nil {
				last = v
				if ok(v) {
					return v
				}
			}
		case <-deadline:
			t.Fatalf("%s: not seen on the bus (last %+v)", what, last)
			return last
		}
	}
}

func near(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-3 }

func TestRobotControlReachesTheBus(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	head := watch(t, r, b, msg.TopicHeadCmd)
	left := watch(t, r, b, msg.ArmCmdTopic("left"))
	right := watch(t, r, b, msg.ArmCmdTopic("right"))
	grip := watch(t, r, b, msg.GripperCmdTopic("right"))
	cmdVel := watch(t, r, b, msg.TopicTracksCmdVel)
	estop := watch(t, r, b, msg.TopicTracksEStop)
	camera := watch(t, r, b, "/saint/head/camera/cmd")
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}

	// The command example of docs/api.md, verbatim.
	if m := c.sendRaw("uuid-string", `{
  "id": "uuid-string",
  "type": "command",
  "target": "head",
  "action": "move",
  "params": {
    "pan": 45.0,
    "tilt": -15.0,
    "speed": 0.5
  }
}`); m["status"] != "ok" {
		t.Fatalf("head move: %v", m)
	}
	expect(t, head, "head move", func(h msg.HeadCommand) bool { return near(h.Pan, 45) && near(h.Tilt, -15) && near(h.Speed, 0.5) })
	c.ok("command", "head", "home", nil, nil)
	expect(t, head, "head home", func(h msg.HeadCommand) bool { return h.Pan == 0 && h.Tilt == 0 && h.Roll == 0 })
	c.ok("command", "head", "camera", map[string]any{"enable": true}, nil)
	expect(t, camera, "head camera", func(m map[string]any) bool { return len(m) > 0 })

	c.ok("command", "arms", "move", map[string]any{"arm": "left", "positions": []float64{10, 20, 30}, "speed": 0.4}, nil)
	expect(t, left, "arms move", func(a msg.ArmCommand) bool {
		return len(a.TargetPositions) >= 3 && near(a.TargetPositions[0], 10) && near(a.TargetPositions[2], 30)
	})
	c.ok("command", "arms", "home", map[string]any{"arm": "both"}, nil)
	expect(t, right, "arms home", func(a msg.ArmCommand) bool {
		return len(a.TargetPositions) >= 5 && a.TargetPositions[0] == 0
	})
	c.ok("command", "arms", "gripper", map[string]any{"arm": "right", "position": 0.25, "force": 5}, nil)
	expect(t, grip, "gripper", func(g msg.GripperCommand) bool { return near(g.Position, 0.25) && near(g.Force, 5) })

	c.ok("command", "tracks", "drive", map[string]any{"linear": 0.5, "angular": -0.2}, nil)
	expect(t, cmdVel, "tracks drive", func(tw msg.Twist) bool { return tw.Linear.X == 0.5 && tw.Angular.Z == -0.2 })
	c.ok("command", "tracks", "stop", nil, nil)
	expect(t, cmdVel, "tracks stop", func(tw msg.Twist) bool { return tw.Linear.X == 0 && tw.Angular.Z == 0 })

	// E-stop wins: it is published, motion commands are refused, and the
	// system status shows it.
	c.ok("command", "tracks", "estop", map[string]any{"enable": true}, nil)
	expect(t, estop, "estop", func(e msg.EStop) bool { return e.Active })
	if m := c.req("command", "tracks", "drive", map[string]any{"linear": 1}); m["status"] != "error" {
		t.Errorf("drive during e-stop: %v", m)
	}
	var st msg.SystemStatus
	c.ok("command", "system", "status", nil, &st)
	if !st.EStopActive {
		t.Error("system status: estop_active false during an e-stop")
	}
	c.ok("command", "tracks", "estop", map[string]any{"enable": false}, nil)
	expect(t, estop, "estop released", func(e msg.EStop) bool { return !e.Active })

	// Bad parameters name the field.
	c.fails("command", "head", "move", map[string]any{"pan": "left"}, "invalid_params", "pan")
	c.fails("command", "head", "move", map[string]any{"pan": 500}, "invalid_params", "pan")
	c.fails("command", "arms", "gripper", map[string]any{"arm": "middle", "position": 0.5}, "invalid_params", "arm")
}

func TestHigherPriorityRouteOverridesWebSocket(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	head := watch(t, r, b, msg.TopicHeadCmd)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	// The RC transmitter (rc_head, priority 300) holds the head at
	// channel_4 = 0.5 (half right) → pan −45; a WebSocket move (200) does
	// not move it.
	rc := msg.RCReceiverState{Protocol: "sbus", Connected: true, ChannelCount: 4, Channels: []msg.RCChannelState{
		{ChannelNumber: 1}, {ChannelNumber: 2}, {ChannelNumber: 3}, {ChannelNumber: 4, Normalized: 0.5}}}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		_ = b.Publish(msg.TopicRCState, rc)
		m := c.req("command", "head", "move", map[string]any{"pan": -30})
		d, _ := m["data"].(map[string]any)
		driving, _ := d["driving"].([]any)
		if len(driving) == 0 || driving[0] != "rc_head" {
			return fmt.Errorf("driving %v", d)
		}
		return nil
	})
	expect(t, head, "RC pan", func(h msg.HeadCommand) bool { return near(h.Pan, -45) })
}

func TestRouterCommands(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	type routeList struct {
		Routes []struct {
			ID       string `json:"id"`
			Enabled  bool   `json:"enabled"`
			Priority int    `json:"priority"`
		} `json:"routes"`
	}
	find := func(l routeList, id string) int {
		for i, rt := range l.Routes {
			if rt.ID == id {
				return i
			}
		}
		return -1
	}
	var l routeList
	if m := c.sendRaw("<nil>", `{"type": "router", "action": "list_routes", "params": {}}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	c.ok("router", "", "list_routes", nil, &l)
	if find(l, "websocket_direct") < 0 {
		t.Fatalf("default routes %+v", l)
	}
	// The API's documented set_route example, verbatim.
	if m := c.sendRaw("<nil>", `{
  "type": "router",
  "action": "set_route",
  "params": {
    "route": {
      "id": "my_custom_route",
      "enabled": true,
      "priority": 150,
      "input": {
        "source": "livelink",
        "subject": "MyCharacter",
        "type": "animation"
      },
      "output": {
        "target": "head"
      },
      "mapping": [
        {"from": "Head", "to": "pan", "scale": 1.0}
      ]
    }
  }
}`); m["status"] != "ok" {
		t.Fatalf("set_route: %v", m)
	}
	c.ok("router", "", "set_route_enabled", map[string]any{"route_id": "my_custom_route", "enabled": false}, nil)
	c.ok("router", "", "list_routes", nil, &l)
	if i := find(l, "my_custom_route"); i < 0 || l.Routes[i].Enabled || l.Routes[i].Priority != 150 {
		t.Errorf("after set_route_enabled: %+v", l)
	}
	c.fails("router", "", "set_route", map[string]any{"route": map[string]any{"id": "x", "priority": 5000,
		"input": map[string]any{"source": "rc"}, "output": map[string]any{"target": "head"}, "mapping": "passthrough"}}, "invalid_params", "")
	c.ok("router", "", "delete_route", map[string]any{"route_id": "my_custom_route"}, nil)
	c.ok("router", "", "list_routes", nil, &l)
	if find(l, "my_custom_route") >= 0 {
		t.Error("route not deleted")
	}
	c.fails("router", "", "delete_route", map[string]any{"route_id": "my_custom_route"}, "invalid_params", "route_id")

	c.ok("router", "", "list_livelink_sources", nil, nil)
	c.fails("router", "", "get_livelink_subject", map[string]any{}, "invalid_params", "subject_name")

	var presets struct {
		Presets []struct{ Name string } `json:"presets"`
	}
	c.ok("router", "", "list_presets", nil, &presets)
	if len(presets.Presets) < 5 {
		t.Errorf("presets %+v: want at least the five standard presets", presets)
	}
	c.ok("router", "", "load_preset", map[string]any{"preset_name": "rc_manual"}, nil)
	c.ok("router", "", "save_preset", map[string]any{"preset_name": "show"}, nil)
	c.ok("router", "", "delete_preset", map[string]any{"preset_name": "show"}, nil)
	c.fails("router", "", "load_preset", map[string]any{"preset_name": "show"}, "invalid_params", "preset_name")

	// Router status reaches subscribers.
	if m := c.sendRaw("s", `{"id":"s","type":"subscribe","topics":["router"]}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	c.state("router", func(d map[string]any) bool { _, ok := d["state"]; return ok })

	// Routes survive a restart.
	c.ok("router", "", "list_routes", nil, &l)
	ids := func(l routeList) string {
		var out []string
		for _, rt := range l.Routes {
			out = append(out, rt.ID)
		}
		return fmt.Sprint(out)
	}
	before := ids(l)
	r.srv.Shutdown()
	r.startServer(b)
	c, _, err = dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	c.ok("router", "", "list_routes", nil, &l)
	if ids(l) != before {
		t.Errorf("routes after restart %s, want the rc_manual preset's %s", ids(l), before)
	}
}

// TestMotionReplyReportsClamps: a tracks drive beyond what the tracks
// node takes (its max_linear, 1 m/s in the fixture) is answered with the
// field, the value asked and the value the node applies; a drive within
// its limits with an empty list.
func TestMotionReplyReportsClamps(t *testing.T) {
	r, _ := apiRobot(t, nil, map[string]simboard.Profile{"n-tracks": simboard.Tracks})
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if m := c.req("management", "", "adopt_node", map[string]any{"node_id": "n-tracks", "role": "tracks"}); m["status"] != "ok" {
			return fmt.Errorf("%v", m)
		}
		return nil
	})
	type reply struct {
		Output  map[string]float64 `json:"output"`
		Clamped *[]msg.Clamp       `json:"clamped"`
	}
	var res reply
	// The node advertises its limits when it starts: until then the
	// reply cannot say.
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		res = reply{}
		c.ok("command", "tracks", "drive", map[string]any{"linear": 3}, &res)
		if res.Clamped == nil {
			return fmt.Errorf("no clamped in %+v", res)
		}
		return nil
	})
	if want := []msg.Clamp{{Field: "linear", Requested: 3, Applied: 1}}; fmt.Sprint(*res.Clamped) != fmt.Sprint(want) {
		t.Errorf("drive at 3 m/s: clamped %+v, want %+v", *res.Clamped, want)
	}
	res = reply{}
	c.ok("command", "tracks", "drive", map[string]any{"linear": 0.5, "angular": 0.2}, &res)
	if res.Clamped == nil || len(*res.Clamped) != 0 {
		t.Errorf("drive within the limits: clamped %v", res.Clamped)
	}
	c.ok("command", "tracks", "stop", nil, nil)
}
