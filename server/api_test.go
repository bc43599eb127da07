package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/linuxhost"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/activity"
	simboard "github.com/saint-os/saint/sim/board"
)

// apiClient is a WebSocket API client that sorts what arrives into
// responses (by id) and state updates.
type apiClient struct {
	t      testing.TB
	conn   *websocket.Conn
	mu     sync.Mutex
	seq    int
	resps  map[string]chan map[string]any
	states chan map[string]any
	closed chan error
}

func dialAPI(t testing.TB, url string, header http.Header) (*apiClient, *http.Response, error) {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		return nil, resp, err
	}
	c := &apiClient{t: t, conn: conn, resps: map[string]chan map[string]any{},
		states: make(chan map[string]any, 1024), closed: make(chan error, 1)}
	t.Cleanup(func() { conn.Close() })
	go c.readLoop()
	return c, resp, nil
}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

func (c *apiClient) readLoop() {
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			c.closed <- err
			return
		}
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m["type"] == "state" {
			select {
			case c.states <- m:
			default:
			}
			continue
		}
		id := fmt.Sprint(m["id"])
		c.mu.Lock()
		ch := c.resps[id]
		if ch == nil {
			ch = make(chan map[string]any, 1)
			c.resps[id] = ch
		}
		c.mu.Unlock()
		ch <- m
	}
}

// send writes a raw request and waits for the response with id.
func (c *apiClient) sendRaw(id, raw string) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	ch := c.resps[id]
	if ch == nil {
		ch = make(chan map[string]any, 1)
		c.resps[id] = ch
	}
	c.mu.Unlock()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(raw)); err != nil {
		c.t.Fatal(err)
	}
	select {
	case m := <-ch:
		return m
	case err := <-c.closed:
		c.t.Fatalf("connection closed waiting for %s: %v", raw, err)
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no answer to %s", raw)
	}
	return nil
}

// req sends a request built from its parts and returns the response.
func (c *apiClient) req(typ, target, action string, params any) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	id := fmt.Sprintf("r%d", c.seq)
	c.mu.Unlock()
	m := map[string]any{"id": id, "type": typ, "action": action}
	if target != "" {
		m["target"] = target
	}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return c.sendRaw(id, string(b))
}

// ok is req that must succeed; it decodes data into out.
func (c *apiClient) ok(typ, target, action string, params, out any) {
	c.t.Helper()
	m := c.req(typ, target, action, params)
	if m["status"] != "ok" {
		c.t.Fatalf("%s %s %s %v: %v", typ, target, action, params, m)
	}
	if out != nil {
		b, _ := json.Marshal(m["data"])
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatal(err)
		}
	}
}

// fails is req that must fail with code, naming field ("" for none).
func (c *apiClient) fails(typ, target, action string, params any, code, field string) map[string]any {
	c.t.Helper()
	m := c.req(typ, target, action, params)
	e, _ := m["error"].(map[string]any)
	if m["status"] != "error" || e == nil || e["code"] != code || (field != "" && e["field"] != field) {
		c.t.Fatalf("%s %s %s %v: %v; want error %s naming %q", typ, target, action, params, m, code, field)
	}
	return m
}

// state waits for a state update on topic that pred accepts.
func (c *apiClient) state(topic string, pred func(data map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-c.states:
			d, _ := m["data"].(map[string]any)
			if m["node"] == topic && (pred == nil || pred(d)) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no state update on %s", topic)
			return nil
		}
	}
}

// closeError waits for the server to close the connection.
func (c *apiClient) closeError() *websocket.CloseError {
	c.t.Helper()
	select {
	case err := <-c.closed:
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce
		}
		c.t.Fatalf("connection ended with %v, want a close frame", err)
	case <-time.After(10 * time.Second):
		c.t.Fatal("connection not closed")
	}
	return nil
}

// fakePower records shutdown and reboot instead of doing them.
type fakePower struct {
	mu    sync.Mutex
	calls []string
}

func (p *fakePower) Shutdown(reason string) error { p.record("shutdown:" + reason); return nil }
func (p *fakePower) Reboot(reason string) error   { p.record("reboot:" + reason); return nil }
func (p *fakePower) record(s string)              { p.mu.Lock(); p.calls = append(p.calls, s); p.mu.Unlock() }
func (p *fakePower) got() string                  { p.mu.Lock(); defer p.mu.Unlock(); return strings.Join(p.calls, ",") }

// apiRobot is a robot on the in-process bus with the given power hook,
// plus a bus connection for the test.
func apiRobot(t *testing.T, power server.Power, profiles map[string]simboard.Profile) (*robot, bus.Bus) {
	t.Helper()
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, profiles, func(o *server.Options) {
		o.Power = power
		o.Version = "9.9.9"
		o.Host = fakeHost{}
	})
	return r, broker.Connect(nil)
}

// apiRobotB is apiRobot for benchmarks: a server with its default
// limits and no nodes.
func apiRobotB(b *testing.B) (*robot, bus.Bus) {
	broker := mem.NewBroker()
	r := newRobotWith(b, func(string) bus.Bus { return broker.Connect(nil) }, nil, nil)
	return r, broker.Connect(nil)
}

func (r *robot) wsURL() string { return "ws://" + r.srv.Addrs()["ws"] + "/saint" }

func TestAuthentication(t *testing.T) {
	r, b := apiRobot(t, &fakePower{}, nil)
	token := r.srv.Token()
	if len(token) < 32 {
		t.Fatalf("token %q", token)
	}

	// No token: nothing can be read or moved, and no state arrives.
	anon, _, err := dialAPI(t, r.wsURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	anon.fails("management", "", "list_adopted", nil, "unauthorized", "token")
	anon.fails("management", "", "get_activity_log", nil, "unauthorized", "token")
	anon.fails("command", "system", "status", nil, "unauthorized", "token")
	anon.fails("command", "head", "move", map[string]any{"pan": 45}, "unauthorized", "token")
	anon.fails("rc", "", "get_status", nil, "unauthorized", "token")
	anon.fails("router", "", "list_routes", nil, "unauthorized", "token")
	if m := anon.sendRaw("s", `{"id":"s","type":"subscribe","topics":["head","logs"],"rate_hz":10}`); m["status"] != "error" {
		t.Errorf("unauthenticated subscribe: %v", m)
	}
	for i := 0; i < 3; i++ {
		_ = b.Publish(msg.TopicHeadState, msg.HeadState{Pan: 1})
	}

	// Wrong token in the auth message, then the right one (docs/api.md's
	// auth message).
	anon.fails("auth", "", "", nil, "invalid_params", "token")
	if m := anon.sendRaw("<nil>", `{"type":"auth","token":"not-the-token","client_id":"controller_001"}`); m["status"] != "error" {
		t.Fatalf("wrong token: %v", m)
	}
	if m := anon.sendRaw("<nil>", fmt.Sprintf(`{"type":"auth","token":%q,"client_id":"controller_001"}`, token)); m["status"] != "ok" {
		t.Fatalf("auth: %v", m)
	}
	anon.ok("management", "", "list_adopted", nil, nil)
	select {
	case m := <-anon.states:
		t.Errorf("state reached a client before it authenticated: %v", m)
	default:
	}

	// Bearer header: a wrong one is refused before the upgrade.
	if _, resp, err := dialAPI(t, r.wsURL(), bearer("wrong")); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong bearer: %v", err)
	}
	other, _, err := dialAPI(t, "ws://"+r.srv.Addrs()["http"]+"/api/ws", bearer(token))
	if err != nil {
		t.Fatal(err)
	}
	other.ok("management", "", "list_unadopted", nil, nil)
	var clients struct {
		Clients []struct {
			ClientID      string `json:"client_id"`
			Authenticated bool   `json:"authenticated"`
		} `json:"clients"`
	}
	other.ok("management", "", "list_clients", nil, &clients)
	if len(clients.Clients) != 2 || clients.Clients[0].ClientID != "controller_001" {
		t.Errorf("list_clients: %+v", clients)
	}

	// Regenerate: every session is closed, the requester after its answer;
	// the old token no longer works, the new one does.
	var regen struct{ Token string }
	other.ok("management", "", "regenerate_token", nil, &regen)
	if regen.Token == "" || regen.Token == token || r.srv.Token() != regen.Token {
		t.Fatalf("regenerated token %q (old %q)", regen.Token, token)
	}
	for name, c := range map[string]*apiClient{"other session": anon, "requester": other} {
		if ce := c.closeError(); ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, "regenerated") {
			t.Errorf("%s closed with %v", name, ce)
		}
	}
	if _, resp, err := dialAPI(t, r.wsURL(), bearer(token)); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("old token after regenerate: %v", err)
	}
	fresh, _, err := dialAPI(t, r.wsURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := fresh.sendRaw("1", fmt.Sprintf(`{"id":"1","type":"auth","token":%q}`, token)); m["status"] != "error" {
		t.Errorf("old token in auth message: %v", m)
	}
	if m := fresh.sendRaw("2", fmt.Sprintf(`{"id":"2","type":"auth","token":%q}`, regen.Token)); m["status"] != "ok" {
		t.Errorf("new token: %v", m)
	}

	// HTTP endpoints need the token too.
	for _, path := range []string{"/api/logs", "/api/logs?download=1", "/api/firmware", "/api/firmware/manifest.json"} {
		resp, err := http.Get("http://" + r.srv.Addrs()["http"] + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", path, resp.StatusCode)
		}
	}
	resp, err := http.Post("http://"+r.srv.Addrs()["http"]+"/api/firmware?version=9.0.0&sha256=00", "application/octet-stream", strings.NewReader("image"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("firmware upload without a token: %d, want 401", resp.StatusCode)
	}
	// With the token the upload reaches the firmware handler, which
	// checks the image (this one is not an executable).
	req, _ := http.NewRequest("POST", "http://"+r.srv.Addrs()["http"]+"/api/firmware?version=9.0.0&sha256=00", strings.NewReader("image"))
	req.Header.Set("Authorization", "Bearer "+regen.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("firmware upload of garbage with a token: %d, want 4xx from the firmware handler", resp.StatusCode)
	}
}

func TestOriginRefused(t *testing.T) {
	r, _ := apiRobot(t, nil, nil)
	h := bearer(r.srv.Token())
	h.Set("Origin", "http://evil.example")
	if _, resp, err := dialAPI(t, r.wsURL(), h); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %v", err)
	}
	h.Set("Origin", "http://"+r.srv.Addrs()["http"])
	if _, _, err := dialAPI(t, "ws://"+r.srv.Addrs()["http"]+"/api/ws", h); err != nil {
		t.Errorf("the web UI's own origin: %v", err)
	}
}

func TestNoAuthOnlyOnLoopback(t *testing.T) {
	b := mem.NewBroker().Connect(nil)
	srv, err := server.New(server.Options{Bus: b, ConfigDir: configDir, DataDir: t.TempDir(), HTTPAddr: "0.0.0.0:0", NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err == nil || !strings.Contains(err.Error(), "loopback") {
		srv.Shutdown()
		t.Fatalf("NoAuth on 0.0.0.0: Start = %v, want a refusal", err)
	}
	// With authentication on, turning it off is refused while the server
	// is configured beyond loopback.
	srv, err = server.New(server.Options{Bus: b, ConfigDir: configDir, DataDir: t.TempDir(), HTTPAddr: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Settings().Patch([]byte(`{"auth":{"required":false}}`)); err == nil || !strings.Contains(err.Error(), "auth.required") {
		t.Errorf("auth off beyond loopback: %v", err)
	}
}

func TestNoAuthServer(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) { o.NoAuth = true })
	c, _, err := dialAPI(t, r.wsURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.ok("management", "", "list_adopted", nil, nil)
	resp, err := http.Get("http://" + r.srv.Addrs()["http"] + "/api/logs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/api/logs with auth off: %d", resp.StatusCode)
	}
}

func TestSystemCommands(t *testing.T) {
	power := &fakePower{}
	r, _ := apiRobot(t, power, map[string]simboard.Profile{"n-head": simboard.Head})
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		m := c.req("management", "", "adopt_node", map[string]any{"node_id": "n-head", "role": "head", "display_name": "Head Unit"})
		if m["status"] != "ok" {
			return fmt.Errorf("%v", m)
		}
		return nil
	})
	var st msg.SystemStatus
	c.ok("command", "system", "status", nil, &st)
	if st.ServerName != "SAINT-01" || st.Version != "9.9.9" || len(st.Nodes) != 1 || st.Nodes[0].NodeID != "n-head" || st.Nodes[0].Role != "head" {
		t.Errorf("system status %+v", st)
	}
	if st.CPUUsage != 12.5 || st.MemoryUsage != 40 || st.CPUTemp != 51 || st.InternalAddress != "192.168.10.1" || st.ExternalAddress != "10.0.0.7" {
		t.Errorf("system status machine health %+v", st)
	}
	if len(st.Inputs) != 2 || st.Inputs[0].Detail != "1 clients" || st.Inputs[1].Detail != "no receiver" {
		t.Errorf("inputs %+v", st.Inputs)
	}
	c.ok("command", "system", "shutdown", map[string]any{"reason": "end of show"}, nil)
	c.ok("command", "system", "reboot", nil, nil)
	if got := power.got(); got != "shutdown:end of show,reboot:" {
		t.Errorf("power hook saw %q", got)
	}
	// Rebooting one node goes to the node, not the power hook.
	c.ok("command", "system", "reboot", map[string]any{"node": "n-head"}, nil)
	if got := power.got(); got != "shutdown:end of show,reboot:" {
		t.Errorf("node reboot reached the power hook: %q", got)
	}
	c.fails("command", "system", "reboot", map[string]any{"node": "nobody"}, "invalid_params", "node")
	c.fails("command", "system", "reboot", map[string]any{"node": "bad id!"}, "invalid_params", "node")
	c.fails("command", "system", "reboot", map[string]any{"node": 7}, "invalid_params", "node")
	// The node comes back ACTIVE in its role.
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		var info struct{ State string }
		c.ok("management", "", "get_node_info", map[string]any{"node_id": "n-head"}, &info)
		if info.State != msg.StateActive {
			return fmt.Errorf("n-head is %s", info.State)
		}
		return nil
	})

	// Without a power hook shutdown is refused, not faked.
	r2, _ := apiRobot(t, nil, nil)
	c2, _, _ := dialAPI(t, r2.wsURL(), bearer(r2.srv.Token()))
	c2.fails("command", "system", "shutdown", nil, "failed", "")
}

func TestRCCommands(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	// The examples of docs/api.md, verbatim.
	get := `{"type": "rc", "action": "get_status", "params": {}}`
	m := c.sendRaw("<nil>", get)
	d := m["data"].(map[string]any)
	if m["status"] != "ok" || d["receiver"] != "none" || d["connected"] != false || d["protocol"] != "sbus" || d["enabled"] != true {
		t.Fatalf("get_status without a receiver: %v", m)
	}
	c.fails("rc", "", "calibrate_channel", map[string]any{"channel": 1, "position": "min"}, "failed", "")

	// A receiver reports on the bus.
	state := msg.RCReceiverState{Protocol: "ibus", Connected: true, ChannelCount: 2, FrameRateHz: 50, RSSI: -65,
		Channels: []msg.RCChannelState{{ChannelNumber: 1, RawValue: 1500}, {ChannelNumber: 2, RawValue: 1010, Normalized: -1}}}
	var status struct {
		Connected   bool   `json:"connected"`
		Receiver    string `json:"receiver"`
		FrameRateHz int    `json:"frame_rate_hz"`
		Channels    []struct {
			Channel    int     `json:"channel"`
			Raw        int     `json:"raw"`
			Normalized float64 `json:"normalized"`
			Name       string  `json:"name"`
		} `json:"channels"`
	}
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		_ = b.Publish(msg.TopicRCState, state)
		c.ok("rc", "", "get_status", nil, &status)
		if !status.Connected {
			return errors.New("receiver not seen")
		}
		return nil
	})
	if status.Receiver != "present" || status.FrameRateHz != 50 || len(status.Channels) != 2 ||
		status.Channels[1].Raw != 1010 || status.Channels[1].Normalized != -1 || status.Channels[1].Name != "throttle" {
		t.Errorf("get_status %+v", status)
	}

	if m := c.sendRaw("<nil>", `{
  "type": "rc",
  "action": "set_channel_config",
  "params": {
    "channel": 1,
    "name": "steering",
    "min": 1000,
    "max": 2000,
    "center": 1500,
    "reversed": false
  }
}`); m["status"] != "ok" {
		t.Fatalf("documented set_channel_config: %v", m)
	}
	c.ok("rc", "", "set_channel_config", map[string]any{"channel": 9, "name": "lights", "reversed": true}, nil)
	var ch9 struct {
		Channel  int    `json:"channel"`
		Name     string `json:"name"`
		Min      int    `json:"min"`
		Reversed bool   `json:"reversed"`
	}
	c.ok("rc", "", "get_channel_config", map[string]any{"channel": 9}, &ch9)
	if ch9.Name != "lights" || !ch9.Reversed || ch9.Min != 1000 {
		t.Errorf("channel 9 %+v", ch9)
	}
	c.fails("rc", "", "set_channel_config", map[string]any{"channel": 1, "min": 2100}, "invalid_params", "min")
	c.fails("rc", "", "set_channel_config", map[string]any{"channel": 1, "center": 900}, "invalid_params", "center")
	c.fails("rc", "", "set_channel_config", map[string]any{"name": "x"}, "invalid_params", "channel")
	c.fails("rc", "", "set_channel_config", map[string]any{"channel": "one"}, "invalid_params", "channel")
	c.fails("rc", "", "get_channel_config", map[string]any{"channel": 17}, "invalid_params", "channel")

	// Calibration takes the receiver's current raw value.
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		_ = b.Publish(msg.TopicRCState, state)
		m := c.req("rc", "", "calibrate_channel", map[string]any{"channel": 2, "position": "min"})
		if m["status"] != "ok" {
			return fmt.Errorf("%v", m)
		}
		return nil
	})
	var all struct {
		Channels []struct {
			Channel, Min int
		}
	}
	c.ok("rc", "", "get_channel_config", nil, &all)
	if all.Channels[1].Channel != 2 || all.Channels[1].Min != 1010 {
		t.Errorf("after calibrating channel 2's min at 1010: %+v", all.Channels[1])
	}
	c.fails("rc", "", "calibrate_channel", map[string]any{"channel": 2, "position": "middle"}, "invalid_params", "position")

	if m := c.sendRaw("<nil>", `{"type": "rc", "action": "set_enabled", "params": {"enabled": true}}`); m["status"] != "ok" {
		t.Errorf("documented set_enabled: %v", m)
	}
	c.ok("rc", "", "set_enabled", map[string]any{"enabled": false}, nil)
	c.fails("rc", "", "set_enabled", map[string]any{}, "invalid_params", "enabled")
	c.fails("rc", "", "set_enabled", map[string]any{"enabled": "yes"}, "invalid_params", "enabled")
	c.ok("rc", "", "set_failsafe", map[string]any{"action": "estop"}, nil)
	c.fails("rc", "", "set_failsafe", map[string]any{"action": "panic"}, "invalid_params", "action")
	c.ok("rc", "", "set_protocol", map[string]any{"protocol": "crsf"}, nil)
	c.fails("rc", "", "set_protocol", map[string]any{"protocol": "dsm2"}, "invalid_params", "protocol")
	var proto struct {
		Protocol  string   `json:"protocol"`
		Supported []string `json:"supported"`
	}
	c.ok("rc", "", "get_protocol", nil, &proto)
	if proto.Protocol != "crsf" || len(proto.Supported) != 5 {
		t.Errorf("get_protocol %+v", proto)
	}

	// The configuration is in the settings and survives a restart.
	r.srv.Shutdown()
	r.startServer(b)
	c, _, err = dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Settings struct {
			RC struct {
				Enabled  bool
				Protocol string
				Failsafe struct{ Action string }
				Channels []struct {
					Channel int
					Name    string
				}
			} `json:"rc"`
		} `json:"settings"`
	}
	c.ok("management", "", "get_settings", nil, &view)
	rc := view.Settings.RC
	if rc.Enabled || rc.Protocol != "crsf" || rc.Failsafe.Action != "estop" || rc.Channels[len(rc.Channels)-1].Name != "lights" {
		t.Errorf("rc settings after restart: %+v", rc)
	}
}

func TestSubscriptionsFromTheBus(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	if m := c.sendRaw("<nil>", `{"type": "subscribe", "topics": ["head", "arms", "tracks"], "rate_hz": 10}`); m["status"] != "ok" {
		t.Fatalf("documented subscribe: %v", m)
	}
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		_ = b.Publish(msg.TopicHeadState, msg.HeadState{Pan: 44.8, Tilt: -14.9, CameraActive: true})
		select {
		case m := <-c.states:
			d := m["data"].(map[string]any)
			if m["node"] != "head" || d["pan"] != 44.8 || d["camera_active"] != true || m["timestamp"].(float64) < 1e9 {
				return fmt.Errorf("state %v", m)
			}
			return nil
		case <-time.After(50 * time.Millisecond):
			return errors.New("no head state")
		}
	})
	_ = b.Publish(msg.ArmStateTopic("right"), map[string]any{"joint_positions": []float64{1, 2}})
	c.state("arms", func(d map[string]any) bool { return d["arm"] == "right" })

	if m := c.sendRaw("<nil>", `{"type": "unsubscribe", "topics": ["arms"]}`); m["status"] != "ok" {
		t.Fatalf("documented unsubscribe: %v", m)
	}
	c.fails("subscribe", "", "", nil, "invalid_params", "topics")
	if m := c.sendRaw("u1", `{"id":"u1","type":"subscribe","topics":["legs"]}`); m["error"].(map[string]any)["field"] != "topics" {
		t.Errorf("unknown topic: %v", m)
	}

	// Activity log events and the RC receiver are subscribable too.
	c.ok("management", "", "get_settings", nil, nil)
	if m := c.sendRaw("s2", `{"id":"s2","type":"subscribe","topics":["logs","rc","system"]}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	r.srv.Log().Info("Tracks calibrated", "source", "tracks", "node", "n-tracks")
	c.state("logs", func(d map[string]any) bool { return d["message"] == "Tracks calibrated" && d["node"] == "n-tracks" })
	_ = b.Publish(msg.TopicRCState, msg.RCReceiverState{Protocol: "sbus", Connected: true})
	c.state("rc", func(d map[string]any) bool { return d["connected"] == true })
	c.state("system", func(d map[string]any) bool { return d["server_name"] == "SAINT-01" })
}

func TestBadInput(t *testing.T) {
	r, _ := apiRobot(t, nil, nil)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	bystander, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ raw, code, field string }{
		{`{"id":"a","type":`, "bad_request", ""},
		{`[1,2,3]`, "bad_request", ""},
		{`{"id":"b","action":"list_adopted"}`, "bad_request", "type"},
		{`{"id":"c","type":"teleport","action":"now"}`, "unknown_action", "type"},
		{`{"id":"d","type":"management","action":"fly"}`, "unknown_action", "action"},
		{`{"id":"e","type":"management"}`, "bad_request", "action"},
		{`{"id":"f","type":"command","target":"legs","action":"walk"}`, "unknown_action", "target"},
		{`{"id":"g","type":"command","action":"status"}`, "bad_request", "target"},
		{`{"id":"h","type":"management","action":"get_node_info","params":{}}`, "invalid_params", "node_id"},
		{`{"id":"i","type":"management","action":"get_node_info","params":{"node_id":42}}`, "invalid_params", "node_id"},
		{`{"id":"j","type":"management","action":"get_activity_log","params":{"limit":"ten"}}`, "invalid_params", "limit"},
		{`{"id":"k","type":"management","action":"get_activity_log","params":{"level":"LOUD"}}`, "invalid_params", "level"},
		{`{"id":"l","type":"management","action":"set_settings","params":{"livelink":{"data_port":99999}}}`, "invalid_params", "livelink.data_port"},
		{`{"id":"m","type":"management","action":"set_settings","params":{"volume":11}}`, "invalid_params", "volume"},
		{`{"id":"n","type":"subscribe","topics":["head"],"rate_hz":-1}`, "invalid_params", "rate_hz"},
	} {
		// Malformed JSON is answered with id null.
		id := "<nil>"
		var probe struct{ ID string }
		if json.Unmarshal([]byte(tc.raw), &probe) == nil && probe.ID != "" {
			id = probe.ID
		}
		m := c.sendRaw(id, tc.raw)
		e, _ := m["error"].(map[string]any)
		if m["status"] != "error" || e == nil || e["code"] != tc.code || (tc.field != "" && e["field"] != tc.field) {
			t.Errorf("%s: %v; want %s naming %q", tc.raw, m, tc.code, tc.field)
		}
		if tc.field != "" && !strings.Contains(fmt.Sprint(e["message"]), tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.raw, e["message"], tc.field)
		}
	}
	// An oversized frame closes that connection with a reason; the
	// bystander is unaffected.
	big := fmt.Sprintf(`{"id":"z","type":"management","action":"list_adopted","params":{"pad":%q}}`, strings.Repeat("x", 100<<10))
	// The server may close before the client has finished writing, so a
	// write error here is expected; the close frame is what counts.
	_ = c.conn.WriteMessage(websocket.TextMessage, []byte(big))
	if ce := c.closeError(); ce.Code != websocket.CloseMessageTooBig || !strings.Contains(ce.Text, "exceeds") {
		t.Errorf("oversized frame: %v", ce)
	}
	bystander.ok("management", "", "list_adopted", nil, nil)
}

func TestSettingsAndActivityLogSurviveRestart(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Settings struct {
			System struct {
				ServerName string `json:"server_name"`
				Hostname   string `json:"hostname"`
			} `json:"system"`
			LiveLink struct {
				DiscoveryPort int    `json:"discovery_port"`
				DataPort      int    `json:"data_port"`
				BroadcastName string `json:"broadcast_name"`
			} `json:"livelink"`
			Auth struct{ Required bool } `json:"auth"`
		} `json:"settings"`
		AuthActive bool `json:"auth_active"`
	}
	c.ok("management", "", "get_settings", nil, &view)
	if view.Settings.LiveLink.DiscoveryPort != 54321 || !view.Settings.Auth.Required || !view.AuthActive {
		t.Fatalf("defaults %+v", view)
	}
	c.ok("management", "", "set_settings", map[string]any{
		"system":   map[string]any{"server_name": "SAINT-07", "hostname": "saint-07"},
		"livelink": map[string]any{"data_port": 6000, "broadcast_name": "SAINT-07"},
	}, nil)
	r.srv.Log().Warn("High motor temperature: 52°C", "source", "tracks", "node", "n-tracks")
	r.srv.Log().Info("Route rc_drive processed input", "source", "router")
	var token = r.srv.Token()

	r.srv.Shutdown()
	r.startServer(b)
	if r.srv.Token() != token {
		t.Error("the token changed across a restart")
	}
	c, _, err = dialAPI(t, r.wsURL(), bearer(token))
	if err != nil {
		t.Fatal(err)
	}
	c.ok("management", "", "get_settings", nil, &view)
	if view.Settings.System.ServerName != "SAINT-07" || view.Settings.System.Hostname != "saint-07" ||
		view.Settings.LiveLink.DataPort != 6000 || view.Settings.LiveLink.DiscoveryPort != 54321 {
		t.Errorf("settings after restart %+v", view.Settings)
	}
	var st msg.SystemStatus
	c.ok("command", "system", "status", nil, &st)
	if st.ServerName != "SAINT-07" {
		t.Errorf("system status server_name %q", st.ServerName)
	}

	// The API's documented get_activity_log request, verbatim.
	m := c.sendRaw("<nil>", `{
  "type": "management",
  "action": "get_activity_log",
  "params": {
    "limit": 100,
    "offset": 0,
    "level": "INFO",
    "source": null
  }
}`)
	if m["status"] != "ok" {
		t.Fatal(m)
	}
	var log struct {
		Events []activity.Event `json:"events"`
		Total  int              `json:"total"`
	}
	c.ok("management", "", "get_activity_log", map[string]any{"source": "tracks"}, &log)
	if log.Total != 1 || log.Events[0].Message != "High motor temperature: 52°C" || log.Events[0].Node != "n-tracks" || log.Events[0].Level != "WARN" {
		t.Errorf("tracks events after restart: %+v", log)
	}
	c.ok("management", "", "get_activity_log", map[string]any{"level": "WARN", "search": "MOTOR"}, &log)
	if log.Total != 1 {
		t.Errorf("WARN + search: %+v", log)
	}
	c.ok("management", "", "get_activity_log", map[string]any{"limit": 1, "offset": 0}, &log)
	if len(log.Events) != 1 || log.Total < 3 {
		t.Errorf("limit 1: %+v", log)
	}
}

func TestLogsEndpoint(t *testing.T) {
	r, _ := apiRobot(t, nil, nil)
	base := "http://" + r.srv.Addrs()["http"] + "/api/logs"
	get := func(url string, hdr http.Header) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+r.srv.Token())
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", url, resp.StatusCode)
		}
		return resp
	}
	r.srv.Log().Info("Node pi-a1 adopted as Head", "source", "adoption", "node", "pi-a1")
	r.srv.Log().Info("LiveLink subject connected", "source", "livelink")

	resp := get(base+"?source=adoption", nil)
	body, _ := io.ReadAll(resp.Body)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	var e activity.Event
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &e) != nil || e.Node != "pi-a1" {
		t.Errorf("NDJSON ?source=adoption: %q", body)
	}

	// Follow: the backlog, then new events as they happen.
	resp = get(base+"?follow=1&source=router", nil)
	rd := bufio.NewReader(resp.Body)
	r.srv.Log().Info("Route rc_drive active", "source", "router")
	line, err := rd.ReadString('\n')
	if err != nil || json.Unmarshal([]byte(line), &e) != nil || e.Message != "Route rc_drive active" {
		t.Errorf("followed line %q: %v", line, err)
	}

	// Server-Sent Events.
	resp = get(base+"?source=livelink", http.Header{"Accept": {"text/event-stream"}})
	rd = bufio.NewReader(resp.Body)
	id, _ := rd.ReadString('\n')
	data, _ := rd.ReadString('\n')
	if !strings.HasPrefix(id, "id: ") || !strings.Contains(data, "LiveLink subject connected") {
		t.Errorf("SSE %q %q", id, data)
	}

	// Download: the files, which hold every event.
	resp = get(base+"?download=1", nil)
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") {
		t.Errorf("download Content-Disposition %q", cd)
	}
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		resp := get(base+"?download=1", nil)
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), "Route rc_drive active") || !strings.Contains(string(body), "adopted as Head") {
			return fmt.Errorf("download %q", body)
		}
		return nil
	})
	req, _ := http.NewRequest("GET", base+"?limit=abc", nil)
	req.Header.Set("Authorization", "Bearer "+r.srv.Token())
	bad, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("?limit=abc: %d", bad.StatusCode)
	}
}

// fakeHost is a machine with known health.
type fakeHost struct{}

func (fakeHost) Sample() linuxhost.Metrics {
	return linuxhost.Metrics{Metrics: board.Metrics{CPUUsagePct: 12.5, MemoryUsagePct: 40, CPUTempC: 51}}
}

func (fakeHost) Addresses() (string, string) { return "192.168.10.1", "10.0.0.7" }
