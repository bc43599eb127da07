package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/ws/wsclient"
	"github.com/saint-os/saint/server/ws/wsclient/wsclienttest"
	simboard "github.com/saint-os/saint/sim/board"
)

const configDir = "../fixtures/config"

// robot is a server and simulated nodes sharing one wall-clock executor.
type robot struct {
	t     testing.TB
	ex    *executor.Executor
	srv   *server.Server
	nodes map[string]*node.Node
	stop  context.CancelFunc
	data  string
	// configure adjusts the server's options before each start.
	configure func(*server.Options)
}

// newRobot starts a server on busFor("server") and one node per profile on
// busFor(id).
func newRobot(t testing.TB, busFor func(name string) bus.Bus, profiles map[string]simboard.Profile) *robot {
	t.Helper()
	return newRobotWith(t, busFor, profiles, nil)
}

// newRobotWith is newRobot with configure applied to the server's options.
func newRobotWith(t testing.TB, busFor func(name string) bus.Bus, profiles map[string]simboard.Profile, configure func(*server.Options)) *robot {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	r := &robot{t: t, ex: executor.New(nil), nodes: map[string]*node.Node{}, data: t.TempDir(), configure: configure}
	// stop returns once Run has: no callback may write into the data
	// directory while the test's cleanup removes it.
	r.stop = func() { cancel(); <-ran }
	go func() { defer close(ran); _ = r.ex.Run(ctx) }()
	t.Cleanup(r.close)
	r.startServer(busFor("server"))
	for id, prof := range profiles {
		b, err := simboard.New(&simboard.Options{NodeID: id, Profile: prof, Clock: r.ex.Clock()})
		if err != nil {
			t.Fatal(err)
		}
		n, err := node.New(node.Options{Exec: r.ex, Bus: busFor(id), Board: b, FirmwareVersion: "1.0.0",
			StateDir: filepath.Join(r.data, "nodes", id)})
		if err != nil {
			t.Fatal(err)
		}
		n.Start()
		r.nodes[id] = n
	}
	return r
}

func (r *robot) startServer(b bus.Bus) {
	o := server.Options{Bus: b, Exec: r.ex, ConfigDir: configDir,
		DataDir: filepath.Join(r.data, "server"), HTTPAddr: "127.0.0.1:0", WSAddr: "127.0.0.1:0"}
	if r.configure != nil {
		r.configure(&o)
	}
	srv, err := server.New(o)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.srv = srv
}

func (r *robot) close() {
	if r.srv != nil {
		r.srv.Shutdown()
	}
	_ = r.ex.Do(context.Background(), func() {
		for _, n := range r.nodes {
			n.Stop()
		}
	})
	r.stop()
}

// wsClient is wsclienttest's client with the answer whole, for tests
// that look at an error answer's field.
type wsClient struct {
	*wsclienttest.Client
	t testing.TB
}

// dialWS connects to url, presenting token as a bearer header if it is
// not empty.
func dialWS(t testing.TB, url, token string) *wsClient {
	t.Helper()
	return &wsClient{Client: wsclienttest.Dial(t, url, token), t: t}
}

type response struct {
	Status  string          `json:"status"`
	Data    json.RawMessage `json:"data"`
	Message string          `json:"message"`
	Error   struct {
		Field string `json:"field"`
	} `json:"error"`
}

func (c *wsClient) call(action string, params any) response {
	c.t.Helper()
	return c.request("management", "", action, params)
}

// request sends a request and returns its answer, an error answer as
// Status "error"; anything else going wrong fails the test.
func (c *wsClient) request(typ, target, action string, params any) response {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	data, err := c.Client.Client.Call(ctx, typ, target, action, params)
	var ce *wsclient.CallError
	switch {
	case errors.As(err, &ce):
		r := response{Status: "error", Message: ce.Message}
		r.Error.Field = ce.Field
		return r
	case err != nil:
		c.t.Fatal(err)
	}
	return response{Status: "ok", Data: data}
}

func (c *wsClient) ok(action string, params any, out any) {
	c.t.Helper()
	r := c.call(action, params)
	if r.Status != "ok" {
		c.t.Fatalf("%s: %s", action, r.Message)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			c.t.Fatal(err)
		}
	}
}

type nodeList struct {
	Nodes []struct {
		NodeID      string `json:"node_id"`
		Role        string `json:"role"`
		Instance    string `json:"instance"`
		DisplayName string `json:"display_name"`
		Online      bool   `json:"online"`
		Pins        []any  `json:"pins"`
		LastStatus  *struct {
			State string `json:"state"`
		} `json:"last_status"`
	} `json:"nodes"`
}

func (c *wsClient) ids(action string) map[string]bool {
	var l nodeList
	c.ok(action, nil, &l)
	out := map[string]bool{}
	for _, n := range l.Nodes {
		out[n.NodeID] = true
	}
	return out
}

func TestManagementOverWebSocket(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobot(t, func(string) bus.Bus { return broker.Connect(nil) }, map[string]simboard.Profile{
		"n-head": simboard.Head, "n-arms": simboard.Arms, "n-bare": simboard.Bare,
	})
	addrs := r.srv.Addrs()
	c := dialWS(t, "ws://"+addrs["ws"]+"/saint", r.srv.Token())
	web := dialWS(t, "ws://"+addrs["http"]+"/api/ws", r.srv.Token())

	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if got := c.ids("list_unadopted"); len(got) != 3 {
			return fmt.Errorf("unadopted: %v", got)
		}
		return nil
	})
	var gpio struct {
		NodeID string `json:"node_id"`
		Pins   []struct {
			PinName string `json:"pin_name"`
			InUse   bool   `json:"in_use"`
			UsedBy  string `json:"used_by"`
		} `json:"pins"`
	}
	web.ok("get_gpio_status", map[string]any{"node_id": "n-head"}, &gpio)
	if gpio.NodeID != "n-head" || len(gpio.Pins) != 28 {
		t.Errorf("gpio status: %+v", gpio)
	}

	// Errors name the field.
	for _, tc := range []struct {
		action string
		params map[string]any
		field  string
	}{
		{"adopt_node", map[string]any{"role": "head"}, "node_id"},
		{"adopt_node", map[string]any{"node_id": "n-head", "role": "wings"}, "role"},
		{"adopt_node", map[string]any{"node_id": "n-arms", "role": "arms"}, "instance"},
		{"adopt_node", map[string]any{"node_id": "ghost", "role": "head"}, "node_id"},
		{"get_node_info", map[string]any{"node_id": 42}, "node_id"},
		{"reset_node", map[string]any{}, "node_id"},
		{"set_node_name", map[string]any{"node_id": "n-head"}, "display_name"},
	} {
		resp := c.call(tc.action, tc.params)
		if resp.Status != "error" || resp.Error.Field != tc.field || !strings.Contains(resp.Message, tc.field) {
			t.Errorf("%s %v: status %s field %q message %q, want an error naming %s", tc.action, tc.params, resp.Status, resp.Error.Field, resp.Message, tc.field)
		}
	}

	// A refused adoption says what the board lacks.
	if resp := c.call("adopt_node", map[string]any{"node_id": "n-bare", "role": "head"}); resp.Status != "error" || !strings.Contains(resp.Message, "0x68") {
		t.Errorf("bare board as head: %+v", resp)
	}

	c.ok("adopt_node", map[string]any{"node_id": "n-head", "role": "head", "display_name": "Head Unit"}, nil)
	c.ok("adopt_node", map[string]any{"node_id": "n-arms", "role": "arms", "instance": "right"}, nil)
	var adopted nodeList
	c.ok("list_adopted", nil, &adopted)
	if len(adopted.Nodes) != 2 || adopted.Nodes[0].NodeID != "n-arms" || adopted.Nodes[0].Instance != "right" ||
		adopted.Nodes[1].DisplayName != "Head Unit" || adopted.Nodes[1].LastStatus == nil || adopted.Nodes[1].LastStatus.State != "ACTIVE" {
		t.Errorf("list_adopted: %+v", adopted)
	}
	if got := c.ids("list_unadopted"); len(got) != 1 || !got["n-bare"] {
		t.Errorf("unadopted after adoptions: %v", got)
	}
	c.ok("set_node_name", map[string]any{"node_id": "n-head", "display_name": "Front Head"}, nil)
	var info struct {
		Adopted     bool   `json:"adopted"`
		Online      bool   `json:"online"`
		State       string `json:"state"`
		Role        string `json:"role"`
		DisplayName string `json:"display_name"`
		TopicPrefix string `json:"topic_prefix"`
	}
	c.ok("get_node_info", map[string]any{"node_id": "n-head"}, &info)
	if !info.Adopted || !info.Online || info.State != "ACTIVE" || info.Role != "head" || info.DisplayName != "Front Head" || info.TopicPrefix != "/saint/head" {
		t.Errorf("get_node_info: %+v", info)
	}
	var fw struct {
		Nodes []struct {
			NodeID  string `json:"node_id"`
			Version string `json:"version"`
		} `json:"nodes"`
	}
	c.ok("firmware_status", nil, &fw)
	if len(fw.Nodes) != 3 || fw.Nodes[0].Version != "1.0.0" {
		t.Errorf("firmware_status: %+v", fw)
	}
	var upd struct {
		Nodes []struct {
			NodeID  string `json:"node_id"`
			Success bool   `json:"success"`
		} `json:"nodes"`
	}
	c.ok("trigger_update", map[string]any{"node_id": "n-arms"}, &upd)
	if len(upd.Nodes) != 1 || !upd.Nodes[0].Success {
		t.Errorf("trigger_update: %+v", upd)
	}
	// The arms node reboots to check firmware and resumes its role.
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		var info struct{ State string }
		c.ok("get_node_info", map[string]any{"node_id": "n-arms"}, &info)
		if info.State != "ACTIVE" {
			return fmt.Errorf("arms state %s", info.State)
		}
		return nil
	})

	// A restarted server remembers its adoptions.
	r.srv.Shutdown()
	r.startServer(broker.Connect(nil))
	c = dialWS(t, "ws://"+r.srv.Addrs()["ws"]+"/saint", r.srv.Token())
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		var l nodeList
		c.ok("list_adopted", nil, &l)
		if len(l.Nodes) != 2 || !l.Nodes[0].Online || !l.Nodes[1].Online || l.Nodes[1].DisplayName != "Front Head" {
			return fmt.Errorf("after server restart: %+v", l)
		}
		return nil
	})

	c.ok("reset_node", map[string]any{"node_id": "n-head"}, nil)
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if !c.ids("list_unadopted")["n-head"] || c.ids("list_adopted")["n-head"] {
			return fmt.Errorf("n-head not back in the unadopted list")
		}
		return nil
	})

	resp, err := http.Get("http://" + r.srv.Addrs()["http"] + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "SAINT.OS") {
		t.Errorf("GET /: %d", resp.StatusCode)
	}
}

// BenchmarkAdoptNode measures adopt_node over the WebSocket API, with the
// server and node talking over a real NATS broker on 127.0.0.1, from the
// request to the response — which the node sends once it is ACTIVE with its
// role persisted (fsync included).
func BenchmarkAdoptNode(b *testing.B) {
	ns, err := broker.Start(&broker.Options{Port: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Shutdown()
	r := newRobot(b, func(name string) bus.Bus {
		c, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Name: name})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}, map[string]simboard.Profile{"bench-head": simboard.Head})
	c := dialWS(b, "ws://"+r.srv.Addrs()["ws"]+"/saint", r.srv.Token())
	waitUnadopted := func() {
		bustest.CheckFor(b, 10*time.Second, 20*time.Millisecond, func() error {
			if !c.ids("list_unadopted")["bench-head"] {
				return fmt.Errorf("node not unadopted")
			}
			return nil
		})
	}
	waitUnadopted()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.ok("adopt_node", map[string]any{"node_id": "bench-head", "role": "head"}, nil)
		b.StopTimer()
		c.ok("reset_node", map[string]any{"node_id": "bench-head"}, nil)
		waitUnadopted()
		b.StartTimer()
	}
}
