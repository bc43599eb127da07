package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
)

// The balance console command reaches the balance role's bus service and
// brings its answer back.
func TestBalanceConsoleForwarded(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	var got []string
	sub, err := bus.ServeJSON(b, msg.ServiceBalanceConsole, r.ex, func(req msg.BalanceConsoleRequest, reply func(msg.BalanceConsoleResponse, error)) {
		got = append(got, req.Line)
		reply(msg.BalanceConsoleResponse{Output: "echo " + req.Line, OK: req.Line != "bogus"}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	var out msg.BalanceConsoleResponse
	c.ok("command", "balance", "console", map[string]any{"line": "speed_limit 20"}, &out)
	if out.Output != "echo speed_limit 20" || !out.OK {
		t.Errorf("answer %+v", out)
	}
	c.ok("command", "balance", "console", map[string]any{"line": "bogus"}, &out)
	if out.OK {
		t.Errorf("a refused command came back ok: %+v", out)
	}
	c.fails("command", "balance", "console", map[string]any{}, "invalid_params", "line")
	c.fails("command", "balance", "console", map[string]any{"line": 3}, "invalid_params", "line")
}

// balance arm and disarm run the console's arm and disarm: the base's
// refusal comes back as an error with its reason.
func TestBalanceArmCommands(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	upright := false
	sub, err := bus.ServeJSON(b, msg.ServiceBalanceConsole, r.ex, func(req msg.BalanceConsoleRequest, reply func(msg.BalanceConsoleResponse, error)) {
		switch {
		case req.Line == "arm" && !upright:
			reply(msg.BalanceConsoleResponse{Output: "arm: refused: not upright (pitch 14.0°)"}, nil)
		case req.Line == "arm":
			reply(msg.BalanceConsoleResponse{Output: "arm: armed", OK: true}, nil)
		default:
			reply(msg.BalanceConsoleResponse{Output: req.Line + ": motors off", OK: true}, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	m := c.fails("command", "balance", "arm", map[string]any{}, "failed", "")
	if e, _ := m["error"].(map[string]any); e == nil || e["message"] != "arm: refused: not upright (pitch 14.0°)" {
		t.Errorf("refused arm: %v", m)
	}
	upright = true
	var out struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	c.ok("command", "balance", "arm", nil, &out)
	if !out.Success || out.Message != "arm: armed" {
		t.Errorf("arm: %+v", out)
	}
	c.ok("command", "balance", "disarm", map[string]any{}, &out)
	if !out.Success || out.Message != "disarm: motors off" {
		t.Errorf("disarm: %+v", out)
	}
	c.fails("command", "balance", "arm", map[string]any{"force": true}, "invalid_params", "force")
}

// A node's warnings reach the activity log and its active alerts; the same
// alert again soon is counted, not logged again.
func TestNodeAlertsRecorded(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := b.Publish(msg.NodeLogTopic("sim-tracks"), msg.NodeLog{NodeID: "sim-tracks", Level: msg.NodeLogWarning, Source: "tracks",
			Message: "/saint/tracks: battery low: 25.10 V", Attrs: map[string]string{"volts": "25.1"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish(msg.NodeLogTopic("sim-head"), msg.NodeLog{NodeID: "spoofed", Level: msg.NodeLogError, Source: "head", Message: "imu lost"}); err != nil {
		t.Fatal(err)
	}
	var alerts struct {
		Nodes map[string][]struct {
			Level, Source, Message string
			Count                  int
		} `json:"nodes"`
	}
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		c.ok("management", "", "get_node_alerts", map[string]any{}, &alerts)
		if len(alerts.Nodes["sim-tracks"]) == 1 && alerts.Nodes["sim-tracks"][0].Count == 3 && len(alerts.Nodes["sim-head"]) == 1 {
			return nil
		}
		return fmt.Errorf("get_node_alerts: %+v", alerts)
	})
	if a := alerts.Nodes["sim-head"][0]; a.Level != msg.NodeLogError || a.Source != "head" || a.Message != "imu lost" {
		t.Errorf("sim-head's alert %+v", a)
	}
	if _, ok := alerts.Nodes["spoofed"]; ok {
		t.Error("an alert was filed under the node id its message claimed, not its topic's")
	}
	var log struct {
		Events []struct {
			Level, Source, Node, Message string
		} `json:"events"`
	}
	c.ok("management", "", "get_activity_log", map[string]any{"node": "sim-tracks"}, &log)
	n := 0
	for _, e := range log.Events {
		if e.Message == "/saint/tracks: battery low: 25.10 V" {
			n++
			if e.Level != "WARN" || e.Source != "tracks" || e.Node != "sim-tracks" {
				t.Errorf("activity log entry %+v", e)
			}
		}
	}
	if n != 1 {
		t.Errorf("the repeated alert is %d times in the activity log, want once", n)
	}
}
