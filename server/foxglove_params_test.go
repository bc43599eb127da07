package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/foxglove"
	simboard "github.com/saint-os/saint/sim/board"
)

// fgParams is a Foxglove WebSocket client that reads JSON messages only.
type fgParams struct {
	t    testing.TB
	conn *websocket.Conn
}

func dialFoxglove(t testing.TB, addr, token string) *fgParams {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}}
	conn, resp, err := d.Dial("ws://"+addr+"/?token="+token, nil)
	if err != nil {
		t.Fatalf("dial Foxglove: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return &fgParams{t: t, conn: conn}
}

func (c *fgParams) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

// until reads JSON messages until pred accepts one, failing after
// timeout; binary frames (time) are skipped.
func (c *fgParams) until(what string, timeout time.Duration, pred func(m map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	_ = c.conn.SetReadDeadline(deadline)
	for {
		typ, b, err := c.conn.ReadMessage()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		if typ != websocket.TextMessage {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatal(err)
		}
		if pred(m) {
			return m
		}
	}
}

// values reads until the parameterValues with id (none: an update) and
// returns its parameters by name; a status of level error on the way is
// returned in errs.
func (c *fgParams) values(id string) (vals map[string]any, errs []string) {
	c.t.Helper()
	m := c.until("parameterValues "+id, 10*time.Second, func(m map[string]any) bool {
		if m["op"] == "status" && m["level"] == 2.0 {
			errs = append(errs, m["message"].(string))
		}
		got, _ := m["id"].(string)
		return m["op"] == "parameterValues" && got == id
	})
	vals = map[string]any{}
	for _, p := range m["parameters"].([]any) {
		p := p.(map[string]any)
		vals[p["name"].(string)] = p["value"]
	}
	return vals, errs
}

// TestFoxgloveParameters: a Foxglove client reads the server's settings,
// the adopted nodes' names and the router's blending as parameters, sets
// them through the WebSocket API's own calls (checked and stored as the
// web UI's changes are, refused with a status naming the parameter), and
// hears of changes made on the WebSocket API.
func TestFoxgloveParameters(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, map[string]simboard.Profile{"n-head": simboard.Head},
		func(o *server.Options) { o.FoxgloveAddr = "127.0.0.1:0" })
	addrs := r.srv.Addrs()
	api := dialWS(t, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	waitUnadopted(t, api, "n-head")
	api.ok("adopt_node", map[string]any{"node_id": "n-head", "role": "head", "display_name": "Head Unit"}, nil)

	fg := dialFoxglove(t, addrs["foxglove"], r.srv.Token())
	info := fg.until("serverInfo", 5*time.Second, func(m map[string]any) bool { return m["op"] == "serverInfo" })
	var caps []string
	for _, c := range info["capabilities"].([]any) {
		caps = append(caps, c.(string))
	}
	if !slices.Contains(caps, "parameters") || !slices.Contains(caps, "parametersSubscribe") {
		t.Fatalf("capabilities %v lack parameters and parametersSubscribe", caps)
	}

	// Get: every parameter, as Foxglove asks on connecting.
	fg.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "get-all-params"})
	all, errs := fg.values("get-all-params")
	for name, want := range map[string]any{
		"/server.system.server_name": "SAINT-01", "/server.livelink.data_port": 54322.0, "/server.livelink.enabled": true,
		"/server.auth.required": true, "/head.display_name": "Head Unit", "/router.blending.mode": "priority",
		"/rc.failsafe.action": "hold", "/rc.failsafe.timeout_ms": 500.0,
	} {
		if all[name] != want {
			t.Errorf("%s = %v, want %v", name, all[name], want)
		}
	}
	for name := range all {
		if strings.HasPrefix(name, "/server.rc.") {
			t.Errorf("%s offered: the RC section is read-only in the settings", name)
		}
	}
	if len(errs) > 0 {
		t.Errorf("errors getting parameters: %v", errs)
	}

	// Set a valid value: stored as set_settings stores it, answered with
	// the new value.
	fg.send(map[string]any{"op": "setParameters", "id": "s1", "parameters": []any{
		map[string]any{"name": "/server.livelink.data_port", "value": 54400},
		map[string]any{"name": "/head.display_name", "value": "Front Head"},
		map[string]any{"name": "/router.blending.blend_time_ms", "value": 300},
		map[string]any{"name": "/rc.failsafe.timeout_ms", "value": 800},
	}})
	got, errs := fg.values("s1")
	if got["/server.livelink.data_port"] != 54400.0 || got["/head.display_name"] != "Front Head" || got["/router.blending.blend_time_ms"] != 300.0 ||
		got["/rc.failsafe.timeout_ms"] != 800.0 || got["/rc.failsafe.action"] != nil || len(errs) > 0 {
		t.Errorf("after a valid set: %v, errors %v", got, errs)
	}
	var doc struct {
		Settings struct {
			LiveLink struct {
				DataPort int `json:"data_port"`
			} `json:"livelink"`
			RC struct {
				Failsafe struct {
					Action    string `json:"action"`
					TimeoutMs int    `json:"timeout_ms"`
				} `json:"failsafe"`
			} `json:"rc"`
		} `json:"settings"`
	}
	api.ok("get_settings", nil, &doc)
	if doc.Settings.LiveLink.DataPort != 54400 {
		t.Errorf("the WebSocket API sees data_port %d, want 54400", doc.Settings.LiveLink.DataPort)
	}
	if fs := doc.Settings.RC.Failsafe; fs.TimeoutMs != 800 || fs.Action != "hold" {
		t.Errorf("the WebSocket API sees the RC failsafe %+v, want hold after 800 ms", fs)
	}
	file, err := os.ReadFile(filepath.Join(r.data, "server", "settings.json"))
	if err != nil || !strings.Contains(string(file), `"data_port": 54400`) {
		t.Errorf("settings.json does not hold the new port (%v):\n%s", err, file)
	}
	var blending struct {
		BlendTimeMS int `json:"blend_time_ms"`
	}
	wsRouter(t, api, "get_blending", &blending)
	if blending.BlendTimeMS != 300 {
		t.Errorf("the WebSocket API sees blend_time_ms %d, want 300", blending.BlendTimeMS)
	}
	var nodes nodeList
	api.ok("list_adopted", nil, &nodes)
	if len(nodes.Nodes) != 1 || nodes.Nodes[0].DisplayName != "Front Head" {
		t.Errorf("list_adopted after the set: %+v", nodes.Nodes)
	}

	current := all
	current["/server.livelink.data_port"], current["/head.display_name"], current["/router.blending.blend_time_ms"] = 54400.0, "Front Head", 300.0
	current["/rc.failsafe.timeout_ms"] = 800.0

	// Invalid values: a status error naming the parameter and what was
	// expected, the value unchanged, the connection open.
	for _, tc := range []struct {
		name  string
		value any
		want  string
	}{
		{"/server.livelink.data_port", 0, "/server.livelink.data_port: want a port 1 to 65535, got 0"},
		{"/server.livelink.data_port", "many", "/server.livelink.data_port: want a number"},
		{"/head.display_name", strings.Repeat("x", 65), "/head.display_name: want 1–64 characters"},
		{"/router.blending.mode", "loudest", `/router.blending.mode: want priority, blend or additive, got "loudest"`},
		{"/rc.failsafe.action", "explode", `/rc.failsafe.action: "explode" is not one of hold, neutral, estop, passthrough`},
		{"/rc.failsafe.timeout_ms", 1, "/rc.failsafe.timeout_ms: want"},
		{"/server.no_such", 1, "/server.no_such: no such parameter"},
	} {
		fg.send(map[string]any{"op": "setParameters", "id": "bad", "parameters": []any{map[string]any{"name": tc.name, "value": tc.value}}})
		got, errs := fg.values("bad")
		if len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
			t.Errorf("set %s to %v: errors %q, want one containing %q", tc.name, tc.value, errs, tc.want)
		}
		if got[tc.name] != current[tc.name] {
			t.Errorf("refused set of %s answered %v, want the unchanged %v", tc.name, got[tc.name], current[tc.name])
		}
	}
	api.ok("get_settings", nil, &doc)
	if doc.Settings.LiveLink.DataPort != 54400 {
		t.Errorf("a refused set changed data_port to %d", doc.Settings.LiveLink.DataPort)
	}

	// Subscribe, then change from the WebSocket API: the update arrives.
	fg.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []string{"/server.system.server_name", "/head.display_name"}})
	// The ops run in order: once this is answered, the subscription stands.
	fg.send(map[string]any{"op": "getParameters", "parameterNames": []string{"/head.display_name"}, "id": "subscribed"})
	fg.values("subscribed")
	api.ok("set_settings", map[string]any{"system": map[string]any{"server_name": "Rover"}}, nil)
	api.ok("set_node_name", map[string]any{"node_id": "n-head", "display_name": "Lookout"}, nil)
	seen := map[string]any{}
	for seen["/server.system.server_name"] != "Rover" || seen["/head.display_name"] != "Lookout" {
		upd, _ := fg.values("")
		for k, v := range upd {
			if k != "/server.system.server_name" && k != "/head.display_name" {
				t.Errorf("update of %s, which was not subscribed", k)
			}
			seen[k] = v
		}
	}
	// Unsubscribed, a change is not told.
	fg.send(map[string]any{"op": "unsubscribeParameterUpdates", "parameterNames": []string{}})
	fg.send(map[string]any{"op": "getParameters", "parameterNames": []string{"/server.system.server_name"}, "id": "sync"})
	fg.values("sync")
	api.ok("set_settings", map[string]any{"system": map[string]any{"server_name": "Quiet"}}, nil)
	time.Sleep(2500 * time.Millisecond) // more than two reads of the parameters
	fg.send(map[string]any{"op": "getParameters", "parameterNames": []string{"/server.system.server_name"}, "id": "after"})
	m := fg.until("the answer", 5*time.Second, func(m map[string]any) bool {
		if m["op"] == "parameterValues" && m["id"] == nil {
			t.Errorf("update %v after unsubscribing", m)
		}
		return m["op"] == "parameterValues" && m["id"] == "after"
	})
	if p := m["parameters"].([]any); len(p) != 1 || p[0].(map[string]any)["value"] != "Quiet" {
		t.Errorf("get after the change: %v", p)
	}
}

// wsRouter runs a router call on the WebSocket API and decodes its data
// into out.
func wsRouter(t testing.TB, c *wsClient, action string, out any) {
	t.Helper()
	if err := c.Call("router", "", action, nil, out); err != nil {
		t.Fatalf("router %s: %v", action, err)
	}
}

// waitUnadopted waits until node announces itself.
func waitUnadopted(t testing.TB, c *wsClient, node string) {
	t.Helper()
	bustest.WaitUntil(t, 5*time.Second, node+" to announce itself", func() bool { return c.ids("list_unadopted")[node] })
}

// BenchmarkFoxgloveGetParameters measures a getParameters of every
// parameter on a whole server with an adopted node, over the Foxglove
// connection: the read a subscribed client costs the server each
// ParamInterval, plus the round trip.
func BenchmarkFoxgloveGetParameters(b *testing.B) {
	broker := mem.NewBroker()
	r := newRobotWith(b, func(string) bus.Bus { return broker.Connect(nil) }, map[string]simboard.Profile{"n-head": simboard.Head},
		func(o *server.Options) { o.FoxgloveAddr = "127.0.0.1:0" })
	addrs := r.srv.Addrs()
	api := dialWS(b, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	waitUnadopted(b, api, "n-head")
	api.ok("adopt_node", map[string]any{"node_id": "n-head", "role": "head"}, nil)
	fg := dialFoxglove(b, addrs["foxglove"], r.srv.Token())
	n := 0
	for b.Loop() {
		fg.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "all"})
		vals, _ := fg.values("all")
		n = len(vals)
	}
	b.ReportMetric(float64(n), "params")
}
