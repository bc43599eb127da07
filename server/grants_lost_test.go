package server_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/adoption"
	"github.com/saint-os/saint/server/busaccess"
	simboard "github.com/saint-os/saint/sim/board"
)

// A robot whose server restarts with the bus grants file (bus/nodes.json)
// reading null or empty: the running head node reconnects with its key,
// which the bus no longer grants the head's subjects, so it gets none of
// its commands. The server says so: the file is kept aside, the activity
// log has the error, the head is listed as NEEDS_ADOPTION (never ACTIVE),
// and a head move is refused instead of answered as sent. Restarted, the
// node is not taken back on the key it connects with: it is unadopted
// until adopted again.
func TestLostGrantsNeverShowActive(t *testing.T) {
	for _, content := range []string{"null", ""} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) { testLostGrants(t, content) })
	}
}

func testLostGrants(t *testing.T, content string) {
	busDir := filepath.Join(t.TempDir(), "bus")
	var auth *busaccess.Authority
	start := func(port int) *broker.Server {
		a, err := busaccess.New(busaccess.Options{Dir: busDir, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ns, err := broker.Start(&broker.Options{Port: port, Authentication: a})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ns.Shutdown)
		a.Attach(ns.NATS())
		auth = a
		return ns
	}
	ns := start(-1)
	url := ns.ClientURL()
	keys := filepath.Join(t.TempDir(), "keys")
	var serverBus, nodeBus bus.Bus
	r := newRobotWith(t, func(name string) bus.Bus {
		o := &natsbus.Options{Name: name, Key: auth.ServerKey()}
		if name != "server" {
			kp, err := natsbus.LoadOrCreateKey(filepath.Join(keys, name+".nk"))
			if err != nil {
				t.Fatal(err)
			}
			o = &natsbus.Options{Name: natsbus.NodeClientName(name), Key: kp, InboxPrefix: natsbus.NodeInboxPrefix(name)}
		}
		c, err := natsbus.Connect(url, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if name == "server" {
			serverBus = c
		} else {
			nodeBus = c
		}
		return c
	}, map[string]simboard.Profile{"head-1": simboard.Head}, func(o *server.Options) { o.BusAccess = auth })

	c := dialWS(t, r.wsURL(), r.srv.Token())
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if !c.ids("list_unadopted")["head-1"] {
			return errors.New("head-1 not unadopted yet")
		}
		return nil
	})
	c.ok("adopt_node", map[string]any{"node_id": "head-1", "role": "head"}, nil)
	headState := func(c *wsClient) string {
		var l nodeList
		c.ok("list_adopted", nil, &l)
		for _, n := range l.Nodes {
			if n.NodeID == "head-1" && n.LastStatus != nil {
				return n.LastStatus.State
			}
		}
		return ""
	}
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if s := headState(c); s != "ACTIVE" {
			return fmt.Errorf("head-1 is %q", s)
		}
		return nil
	})
	api, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	if m := api.req("command", "head", "move", map[string]any{"pan": 10}); m["status"] != "ok" {
		t.Fatalf("head move with the head granted: %v", m)
	}

	// The server and its broker restart with the grants file damaged.
	port := ns.Port()
	r.srv.Shutdown()
	ns.Shutdown()
	grants := filepath.Join(busDir, "nodes.json")
	if err := os.WriteFile(grants, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	start(port)
	if auth.GrantsLost() == "" {
		t.Fatal("the Authority took the damaged grants file as whole")
	}
	r.startServer(serverBus)
	c = dialWS(t, r.wsURL(), r.srv.Token())
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		switch s := headState(c); s {
		case "ACTIVE":
			t.Fatal("head-1 is listed ACTIVE with no grant on the bus")
		case adoption.StateNeedsAdoption:
			return nil
		default:
			return fmt.Errorf("head-1 is %q", s)
		}
		return nil
	})
	// The live node stream the node page shows agrees: head-1's status
	// reaches it as NEEDS_ADOPTION, never as the ACTIVE the node reports.
	watch, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	if m := watch.sendRaw("w", `{"id":"w","type":"subscribe","topics":["nodes"]}`); m["status"] != "ok" {
		t.Fatalf("subscribing to nodes: %v", m)
	}
	bustest.CheckFor(t, 20*time.Second, 10*time.Millisecond, func() error {
		for {
			select {
			case m := <-watch.states:
				d, _ := m["data"].(map[string]any)
				if m["node"] != "nodes" || d["node_id"] != "head-1" {
					continue
				}
				switch d["state"] {
				case "ACTIVE":
					t.Fatalf("the nodes stream shows head-1 ACTIVE with no grant on the bus: %v", d)
				case adoption.StateNeedsAdoption:
					return nil
				}
			default:
				return errors.New("no status of head-1 on the nodes stream yet")
			}
		}
	})
	if kept, _ := filepath.Glob(grants + ".corrupt-*"); len(kept) != 1 {
		t.Errorf("copies of the damaged grants file kept: %v, want one", kept)
	}
	events, _ := r.srv.Activity().Query(activity.Filter{Level: "ERROR"})
	var told, named bool
	for _, e := range events {
		told = told || strings.Contains(e.Message, "nodes.json")
		named = named || (e.Node == "head-1" && strings.Contains(e.Message, "adopt it again"))
	}
	if !told || !named {
		t.Errorf("activity log errors %+v: want the damaged grants file and head-1 needing adoption", events)
	}
	api, _, err = dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	if m := api.req("command", "head", "move", map[string]any{"pan": 10}); m["status"] == "ok" {
		t.Errorf("head move answered %v while the head node gets none of its commands", m)
	}

	// The node restarts: its stored role is not validated (the key it
	// connects with is no proof it is the node adopted), so it comes back
	// unadopted, on the adopt list with its key, and is adopted again.
	old := r.nodes["head-1"]
	if err := r.ex.Do(t.Context(), old.Stop); err != nil {
		t.Fatal(err)
	}
	board, err := simboard.New(&simboard.Options{NodeID: "head-1", Profile: simboard.Head, Clock: r.ex.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := node.New(node.Options{Exec: r.ex, Bus: nodeBus, Board: board, FirmwareVersion: "1.0.0", StateDir: old.Store().Dir()})
	if err != nil {
		t.Fatal(err)
	}
	r.nodes["head-1"] = restarted
	restarted.Start()
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if s := headState(c); s == "ACTIVE" {
			t.Fatal("head-1 is listed ACTIVE with no grant on the bus")
		}
		if !c.ids("list_unadopted")["head-1"] {
			return errors.New("head-1 not back on the adopt list")
		}
		return nil
	})
	c.ok("adopt_node", map[string]any{"node_id": "head-1", "role": "head"}, nil)
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if s := headState(c); s != "ACTIVE" {
			return fmt.Errorf("head-1 is %q after adopting it again", s)
		}
		return nil
	})
	if m := api.req("command", "head", "move", map[string]any{"pan": 10}); m["status"] != "ok" {
		t.Errorf("head move once adopted again: %v", m)
	}
}
