package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/busaccess"
	simboard "github.com/saint-os/saint/sim/board"
)

// authRobot is a robot whose server, nodes and clients share a real NATS
// broker on 127.0.0.1 that authenticates with busaccess.
type authRobot struct {
	*robot
	auth *busaccess.Authority
	url  string
	dir  string
	ns   *broker.Server
	// srvBus is the server's own bus connection.
	srvBus *natsbus.Conn
}

func newAuthRobot(t testing.TB, profiles map[string]simboard.Profile) *authRobot {
	t.Helper()
	dir := t.TempDir()
	auth, err := busaccess.New(busaccess.Options{Dir: filepath.Join(dir, "bus")})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := broker.Start(&broker.Options{Port: -1, Authentication: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	auth.Attach(ns.NATS())
	ar := &authRobot{auth: auth, url: ns.ClientURL(), dir: dir, ns: ns}
	ar.robot = newRobotWith(t, func(name string) bus.Bus {
		o := &natsbus.Options{Name: name, ServiceName: natsbus.ServerServicesName, Key: auth.ServerKey()}
		if name != "server" {
			o = &natsbus.Options{Name: natsbus.NodeClientName(name), Key: ar.nodeKey(t, name), InboxPrefix: natsbus.NodeInboxPrefix(name)}
		}
		c, err := natsbus.Connect(ns.ClientURL(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if name == "server" {
			ar.srvBus = c
		}
		return c
	}, profiles, func(o *server.Options) { o.BusAccess = auth })
	return ar
}

// nodeKey is node id's key pair, made on first use as a node makes it at
// first boot.
func (ar *authRobot) nodeKey(t testing.TB, id string) nkeys.KeyPair {
	kp, err := natsbus.LoadOrCreateKey(filepath.Join(ar.dir, "keys", id+".nk"))
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// rawClient is a stock NATS client, as an attacker on the internal
// network has one; errs receives the server's refusals.
type rawClient struct {
	nc   *nats.Conn
	errs chan error
}

// signer is the part of a key pair a client needs.
type signer interface {
	PublicKey() (string, error)
	Sign([]byte) ([]byte, error)
}

func dialRaw(url string, kp signer, name string, more ...nats.Option) (*rawClient, error) {
	c := &rawClient{errs: make(chan error, 64)}
	opts := []nats.Option{nats.Name(name), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case c.errs <- err:
			default:
			}
		})}
	if kp != nil && !isNilKey(kp) {
		pub, _ := kp.PublicKey()
		opts = append(opts, nats.Nkey(pub, kp.Sign))
	}
	nc, err := nats.Connect(url, append(opts, more...)...)
	if err != nil {
		return nil, err
	}
	c.nc = nc
	return c, nil
}

// witness is a client with every permission that records what reaches
// a subject, to show what the broker let through.
type witness struct {
	t   *testing.T
	nc  *nats.Conn
	sub map[string]*nats.Subscription
}

func newWitness(t *testing.T, ar *authRobot, subjects ...string) *witness {
	kp, err := natsbus.ReadKey(ar.auth.KeyFile(busaccess.ToolsKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialRaw(ar.url, kp, "witness")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.nc.Close)
	w := &witness{t: t, nc: c.nc, sub: map[string]*nats.Subscription{}}
	for _, s := range subjects {
		if w.sub[s], err = c.nc.SubscribeSync(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// got drains what reached subject so far. from is flushed first: once
// its flush returns the broker has routed what from sent, and once the
// witness's own flush returns, that has arrived here.
func (w *witness) got(subject string, from *nats.Conn) []string {
	w.t.Helper()
	_ = from.Flush()
	if err := w.nc.Flush(); err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for {
		m, err := w.sub[subject].NextMsg(time.Millisecond)
		if err != nil {
			return out
		}
		out = append(out, string(m.Data))
	}
}

// TestBusRefusesUnauthorisedClients is the attack from the internal
// network: with no key, with a fresh key (an enrolled but unadopted
// "node"), and with an adopted head node's own key, a stock NATS client
// tries to adopt a node, move the head, release the e-stop, plant a fake
// adopted node, read service requests and answer the firmware services;
// the broker refuses all of it, while the server's own paths, adoption
// included, work.
func TestBusRefusesUnauthorisedClients(t *testing.T) {
	ar := newAuthRobot(t, map[string]simboard.Profile{"head-1": simboard.Head, "tracks-1": simboard.Tracks, "spare-1": simboard.Bare})
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if u := c.ids("list_unadopted"); !u["head-1"] || !u["tracks-1"] || !u["spare-1"] {
			return fmt.Errorf("unadopted: %v", u)
		}
		return nil
	})
	// The adopt page shows the key each node connects with.
	var list struct {
		Nodes []struct {
			NodeID string `json:"node_id"`
			BusKey string `json:"bus_key"`
		} `json:"nodes"`
	}
	c.ok("list_unadopted", nil, &list)
	shown := map[string]string{}
	for _, n := range list.Nodes {
		if want, _ := ar.nodeKey(t, n.NodeID).PublicKey(); n.BusKey != want {
			t.Errorf("%s: bus_key %q, want %q", n.NodeID, n.BusKey, want)
		}
		shown[n.NodeID] = n.BusKey
	}
	// An adoption names the key the administrator was shown: another one
	// is refused, naming the field.
	other, _ := nkeys.CreateUser()
	otherPub, _ := other.PublicKey()
	if r := c.call("adopt_node", map[string]any{"node_id": "head-1", "role": "head", "bus_key": otherPub}); r.Status == "ok" || r.Error.Field != "bus_key" {
		t.Fatalf("adopting head-1 with a key it does not connect with: %s %q (field %q), want refused on bus_key", r.Status, r.Message, r.Error.Field)
	}
	if _, _, ok := ar.auth.Role("head-1"); ok {
		t.Fatal("head-1 granted with a key it does not connect with")
	}
	// The legitimate path: adoption over the authenticated bus grants
	// each node its role, bound to the key shown.
	c.ok("adopt_node", map[string]any{"node_id": "head-1", "role": "head", "bus_key": shown["head-1"]}, nil)
	c.ok("adopt_node", map[string]any{"node_id": "tracks-1", "role": "tracks", "bus_key": shown["tracks-1"]}, nil)
	adopted := time.Now()
	for id, want := range map[string]string{"head-1": "head", "tracks-1": "tracks"} {
		if role, _, ok := ar.auth.Role(id); !ok || role != want {
			t.Fatalf("%s granted %q, %v; want %s", id, role, ok, want)
		}
	}
	// The adopted nodes publish their state under their new permissions.
	stateW := newWitness(t, ar, "saint.head.state", "saint.tracks.state")
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		for _, s := range []string{"saint.head.state", "saint.tracks.state"} {
			if len(stateW.got(s, stateW.nc)) == 0 {
				return fmt.Errorf("no %s from the adopted node", s)
			}
		}
		return nil
	})

	// No key: refused at the door.
	if _, err := dialRaw(ar.url, nil, "anonymous"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("connecting without a key: %v, want an authorization violation", err)
	}
	// A key the server did not make, not connecting as a node: refused.
	stranger, _ := nkeys.CreateUser()
	if _, err := dialRaw(ar.url, stranger, "tool"); err == nil {
		t.Fatal("connecting with an unknown key as a tool was accepted")
	}
	// The refusals are in the activity log: one event for the address
	// this minute, however many attempts.
	for i := 0; i < 5; i++ {
		_, _ = dialRaw(ar.url, nil, "anonymous")
	}
	bustest.CheckFor(t, 2*time.Second, 20*time.Millisecond, func() error {
		events, _ := ar.srv.Activity().Query(activity.Filter{Level: "WARN", Source: "bus", Search: "bus connection from 127.0.0.1 refused"})
		if len(events) != 1 {
			return fmt.Errorf("%d refusal events in the activity log, want 1", len(events))
		}
		return nil
	})
	// A key signed for another nonce (a replayed signature): refused.
	replay := replaySigner{kp: ar.nodeKey(t, "head-1")}
	if _, err := dialRaw(ar.url, replay, natsbus.NodeClientName("head-1")); err == nil {
		t.Fatal("connecting with a signature over the wrong nonce was accepted")
	}

	fresh, _ := nkeys.CreateUser()
	attackers := map[string]nkeys.KeyPair{
		"evil":   fresh,                   // enrolled, never adopted
		"head-1": ar.nodeKey(t, "head-1"), // the adopted head, gone rogue
	}
	w := newWitness(t, ar, "_srv.saint.nodes.adopt", "saint.head.cmd", "saint.router.input", "saint.tracks.estop",
		"saint.tracks.cmd_vel", "saint.nodes.fake-1.status", "saint.nodes.spare-1.announce", "_srv.saint.firmware.check")
	relayed := newWitness(t, ar, "saint.nodes.unadopted")
	for id, kp := range attackers {
		t.Run(id, func(t *testing.T) {
			a, err := dialRaw(ar.url, kp, natsbus.NodeClientName(id))
			if err != nil {
				t.Fatal(err)
			}
			defer a.nc.Close()

			// Adopt the spare node.
			_, err = a.nc.Request("_srv.saint.nodes.adopt", []byte(`{"node_id":"spare-1","role":"console"}`), 300*time.Millisecond)
			if err == nil {
				t.Error("adopt request answered")
			}
			if got := w.got("_srv.saint.nodes.adopt", a.nc); len(got) > 0 {
				t.Errorf("adopt request reached the server: %q", got)
			}
			if _, _, ok := ar.auth.Role("spare-1"); ok {
				t.Error("spare-1 granted a role")
			}
			// Move the head; release the e-stop; drive the tracks.
			for _, s := range []string{"saint.head.cmd", "saint.router.input", "saint.tracks.estop", "saint.tracks.cmd_vel"} {
				_ = a.nc.Publish(s, []byte(`{"pan":1,"active":false,"linear_x":0.8}`))
				if got := w.got(s, a.nc); len(got) > 0 {
					t.Errorf("%s: the broker delivered %q", s, got)
				}
			}
			// Plant a fake adopted node, under another id and its own.
			fake := `{"node_id":"fake-1","state":"ACTIVE","role":"console"}`
			_ = a.nc.Publish("saint.nodes.fake-1.status", []byte(fake))
			if got := w.got("saint.nodes.fake-1.status", a.nc); len(got) > 0 {
				t.Errorf("fake status delivered: %q", got)
			}
			// Announce as the spare node (so that the administrator adopts
			// this key in its place), on its subject and on the one the
			// server relays checked announcements on; or connect under
			// its id while it is connected.
			_ = a.nc.Publish("saint.nodes.spare-1.announce", []byte(`{"node_id":"spare-1","firmware_version":"6.6.6"}`))
			for _, g := range w.got("saint.nodes.spare-1.announce", a.nc) {
				if strings.Contains(g, "6.6.6") { // the real spare-1 announces too
					t.Errorf("an announcement as spare-1 from another key was delivered: %.80s", g)
				}
			}
			_ = a.nc.Publish("saint.nodes.unadopted", []byte(`{"node_id":"spare-1","firmware_version":"6.6.6"}`))
			if imp, err := dialRaw(ar.url, kp, natsbus.NodeClientName("spare-1")); err == nil {
				imp.nc.Close()
				t.Error("connected under spare-1's id while spare-1 is connected")
			}
			if want, _ := ar.nodeKey(t, "spare-1").PublicKey(); ar.auth.NodeKey("spare-1") != want {
				t.Errorf("spare-1's key is now %s", ar.auth.NodeKey("spare-1"))
			}
			own := fmt.Sprintf(`{"node_id":%q,"state":"ACTIVE","role":"tracks"}`, id)
			_ = a.nc.Publish("saint.nodes."+id+".status", []byte(own))
			// Clear the tracks' adoption with its id on a topic it may use
			// (once the server no longer takes an "unadopted" word for one
			// sent before the adoption).
			time.Sleep(time.Until(adopted.Add(2100 * time.Millisecond)))
			_ = a.nc.Publish("saint.nodes."+id+".status", []byte(`{"node_id":"tracks-1","state":"UNADOPTED"}`))
			_ = a.nc.Publish("saint.nodes.unadopted", []byte(`{"node_id":"tracks-1"}`))
			_ = a.nc.Flush()
			// Read service requests, and answer the firmware services first.
			snoop, err := a.nc.SubscribeSync("_srv.>")
			if err != nil {
				t.Fatal(err)
			}
			forge, err := a.nc.Subscribe("_srv.saint.firmware.check", func(m *nats.Msg) {
				_ = m.Respond([]byte(`{"update_available":true,"version":"6.6.6"}`))
			})
			if err != nil {
				t.Fatal(err)
			}
			inbox, err := a.nc.SubscribeSync("_INBOX.>")
			if err != nil {
				t.Fatal(err)
			}
			_ = a.nc.Flush()
			caller, err := dialRaw(ar.url, mustRead(t, ar.auth.KeyFile(busaccess.ToolsKeyFile)), "tool")
			if err != nil {
				t.Fatal(err)
			}
			defer caller.nc.Close()
			resp, err := caller.nc.Request("_srv.saint.firmware.check", []byte(`{"node_id":"spare-1","current_version":"1.0.0","hardware_model":"sim"}`), 2*time.Second)
			if err != nil {
				t.Fatalf("firmware check: %v", err)
			}
			if strings.Contains(string(resp.Data), "6.6.6") {
				t.Errorf("the forged firmware answer won: %s", resp.Data)
			}
			if _, err := caller.nc.Request("_srv.saint.system.status", []byte(`{}`), 2*time.Second); err != nil {
				t.Fatalf("system status: %v", err)
			}
			_ = a.nc.Flush()
			for name, s := range map[string]*nats.Subscription{"_srv.>": snoop, "_INBOX.>": inbox} {
				if m, err := s.NextMsg(20 * time.Millisecond); err == nil {
					t.Errorf("%s: read %s %q", name, m.Subject, m.Data)
				}
			}
			if forge.IsValid() {
				_ = forge.Unsubscribe()
			}
			if len(a.errs) == 0 {
				t.Error("the broker reported no permission violation")
			}
		})
	}
	// The spare node's announcements are its own: only those reached the
	// topic the server relays them on.
	bustest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		got := relayed.got("saint.nodes.unadopted", relayed.nc)
		if len(got) == 0 {
			return fmt.Errorf("no announcement relayed")
		}
		for _, g := range got {
			if strings.Contains(g, "6.6.6") || !strings.Contains(g, `"node_id":"spare-1"`) {
				t.Errorf("relayed %.80s", g)
			}
		}
		return nil
	})
	// The own-id ACTIVE status did not make "evil" an adopted node, and the
	// head is still a head.
	if c.ids("list_adopted")["evil"] {
		t.Error("evil planted itself in the registry")
	}
	if role, _, _ := ar.auth.Role("head-1"); role != "head" {
		t.Errorf("head-1 is now %q", role)
	}
	// A forged status must change nothing: there is no event to wait for.
	time.Sleep(200 * time.Millisecond) // the server's executor handles what it received
	if role, _, _ := ar.auth.Role("tracks-1"); role != "tracks" || !c.ids("list_adopted")["tracks-1"] {
		t.Errorf("tracks-1 lost its adoption to a forged status (granted %q)", role)
	}
	// The server's own commands still flow.
	srvKey := ar.auth.ServerKey()
	srvc, err := dialRaw(ar.url, srvKey, "server tool")
	if err != nil {
		t.Fatal(err)
	}
	defer srvc.nc.Close()
	_ = srvc.nc.Publish("saint.tracks.estop", []byte(`{"active":true}`))
	if got := w.got("saint.tracks.estop", srvc.nc); len(got) != 1 {
		t.Errorf("the server's e-stop: delivered %q, want one message", got)
	}

	// Reset takes the role away; a restarted authority still knows the
	// tracks.
	c.ok("reset_node", map[string]any{"node_id": "head-1"}, nil)
	if _, _, ok := ar.auth.Role("head-1"); ok {
		t.Error("head-1 keeps its role after reset")
	}
	again, err := busaccess.New(busaccess.Options{Dir: filepath.Join(ar.dir, "bus")})
	if err != nil {
		t.Fatal(err)
	}
	if role, _, ok := again.Role("tracks-1"); !ok || role != "tracks" {
		t.Errorf("after restart tracks-1 is %q, %v", role, ok)
	}
	if _, _, ok := again.Role("head-1"); ok {
		t.Error("after restart head-1 is granted again")
	}
	head := ar.nodeKey(t, "head-1")
	h, err := dialRaw(ar.url, head, natsbus.NodeClientName("head-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.nc.Close()
	hw := newWitness(t, ar, "saint.head.state")
	_ = h.nc.Publish("saint.head.state", []byte(`{"pan":0}`))
	for _, g := range hw.got("saint.head.state", h.nc) {
		if g == `{"pan":0}` {
			t.Error("a reset head still publishes head state")
		}
	}
}

// TestNodesSpeakOnlyForThemselves: a node validates its stored role and
// fetches its role's configuration on its own per-node services,
// "/saint/nodes/{node_id}/validate_role" and ".../role_config", which the
// broker lets only that node's key call, and the server takes the node
// from the name. An unadopted key and an adopted node gone rogue, each
// with a stock NATS client, cannot validate or fetch as the adopted head
// (the broker refuses the head's names, the server a request naming the
// head on their own), nor through the shared names of older firmware,
// which tell the caller to update; the head itself can.
func TestNodesSpeakOnlyForThemselves(t *testing.T) {
	ar := newAuthRobot(t, map[string]simboard.Profile{"head-1": simboard.Head, "tracks-1": simboard.Tracks})
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if u := c.ids("list_unadopted"); !u["head-1"] || !u["tracks-1"] {
			return fmt.Errorf("unadopted: %v", u)
		}
		return nil
	})
	c.ok("adopt_node", map[string]any{"node_id": "head-1", "role": "head"}, nil)
	c.ok("adopt_node", map[string]any{"node_id": "tracks-1", "role": "tracks"}, nil)
	w := newWitness(t, ar, "_srv.saint.nodes.head-1.validate_role", "_srv.saint.nodes.head-1.role_config")

	// request sends body to subject as node id with key kp, the way a
	// node's client does (replies under its own inbox), and returns the
	// reply envelope's result or error; a request the broker refuses is
	// never answered.
	type outcome struct {
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	// request waits for an answer up to wait: short where the broker is
	// to refuse the request (no answer comes), long where one is due, so
	// that a slow machine does not look like a refusal.
	const refused, answered = 300 * time.Millisecond, 15 * time.Second
	request := func(id string, kp signer, subject, body string, wait time.Duration) (outcome, error) {
		t.Helper()
		a, err := dialRaw(ar.url, kp, natsbus.NodeClientName(id), nats.CustomInboxPrefix(natsbus.NodeInboxPrefix(id)))
		if err != nil {
			t.Fatalf("%s connecting: %v", id, err)
		}
		defer a.nc.Close()
		m, err := a.nc.Request(subject, []byte(body), wait)
		if err != nil {
			return outcome{}, err
		}
		var o outcome
		if err := json.Unmarshal(m.Data, &o); err != nil {
			t.Fatalf("%s: reply %q: %v", subject, m.Data, err)
		}
		return o, nil
	}
	const asHead = `{"node_id":"head-1","role":"head"}`
	fresh, _ := nkeys.CreateUser()
	for _, a := range []struct {
		id string
		kp signer
	}{{"evil", fresh}, {"tracks-1", ar.nodeKey(t, "tracks-1")}} {
		// The head's own names: the broker refuses them to any other key.
		for _, s := range []string{"_srv.saint.nodes.head-1.validate_role", "_srv.saint.nodes.head-1.role_config"} {
			if o, err := request(a.id, a.kp, s, asHead, refused); !errors.Is(err, nats.ErrTimeout) {
				t.Errorf("%s calling %s: answered %+v, %v; want no answer (refused by the broker)", a.id, s, o, err)
			}
			if got := w.got(s, w.nc); len(got) > 0 {
				t.Errorf("%s calling %s: delivered %q", a.id, s, got)
			}
		}
		// Its own name, naming the head: refused by the server.
		o, err := request(a.id, a.kp, "_srv.saint.nodes."+a.id+".validate_role", asHead, answered)
		if err != nil || !strings.Contains(o.Error, "a node may ask only for itself") || len(o.Result) > 0 {
			t.Errorf("%s validating as head-1 on its own service: %+v, %v; want refused", a.id, o, err)
		}
		// Its own name, asking for the head's configuration.
		wait := answered
		if a.id == "evil" {
			wait = refused
		}
		o, err = request(a.id, a.kp, "_srv.saint.nodes."+a.id+".role_config", `{"role":"head"}`, wait)
		if a.id == "evil" {
			if !errors.Is(err, nats.ErrTimeout) {
				t.Errorf("unadopted evil fetching a configuration: %+v, %v; want refused by the broker", o, err)
			}
		} else if err != nil || strings.Contains(string(o.Result), "role: head") || !strings.Contains(string(o.Result), "not being adopted as head") {
			t.Errorf("%s fetching the head's configuration: %s %q, %v; want refused", a.id, o.Result, o.Error, err)
		}
		// The shared names of older firmware: a refusal to update.
		for _, s := range []string{"_srv.saint.nodes.validate_role", "_srv.saint.roles.config"} {
			o, err := request(a.id, a.kp, s, asHead, answered)
			if err != nil || !strings.Contains(o.Error, "update this node's firmware") || len(o.Result) > 0 {
				t.Errorf("%s calling %s as head-1: %+v, %v; want a refusal to update", a.id, s, o, err)
			}
		}
	}

	// The head itself: its role validates, with its configuration, and it
	// may fetch that configuration, and only that one.
	head := ar.nodeKey(t, "head-1")
	o, err := request("head-1", head, "_srv.saint.nodes.head-1.validate_role", asHead, answered)
	var vr msg.ValidateRoleResponse
	if err != nil || o.Error != "" || json.Unmarshal(o.Result, &vr) != nil || !vr.Valid || !strings.Contains(vr.Config, "role: head") {
		t.Errorf("head-1 validating its own role: %+v (%+v), %v", o, vr, err)
	}
	var cr msg.RoleConfigResponse
	o, err = request("head-1", head, "_srv.saint.nodes.head-1.role_config", `{"role":"head"}`, answered)
	if err != nil || json.Unmarshal(o.Result, &cr) != nil || !cr.Success || !strings.Contains(cr.Config, "role: head") {
		t.Errorf("head-1 fetching its own configuration: %+v, %v", o, err)
	}
	cr = msg.RoleConfigResponse{}
	o, err = request("head-1", head, "_srv.saint.nodes.head-1.role_config", `{"role":"tracks"}`, answered)
	if err != nil || json.Unmarshal(o.Result, &cr) != nil || cr.Success || cr.Config != "" {
		t.Errorf("head-1 fetching the tracks' configuration: %+v, %v; want refused", o, err)
	}
	if role, _, _ := ar.auth.Role("head-1"); role != "head" || !c.ids("list_adopted")["head-1"] {
		t.Errorf("head-1 is now %q", role)
	}
}

// TestConsoleAlertsNameTheirNode: a node raises console alerts on its own
// /saint/nodes/<id>/alert, which the broker lets only its key publish on,
// and the server relays them to /saint/console/alerts with the node's id
// as the source. An adopted node gone rogue cannot post on the console's
// topic (as "server" or anyone), nor on another node's alert topic; an
// unadopted key cannot raise alerts at all; its own alerts arrive naming
// it, whatever source they claim.
func TestConsoleAlertsNameTheirNode(t *testing.T) {
	ar := newAuthRobot(t, map[string]simboard.Profile{"head-1": simboard.Head, "tracks-1": simboard.Tracks})
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if u := c.ids("list_unadopted"); !u["head-1"] || !u["tracks-1"] {
			return fmt.Errorf("unadopted: %v", u)
		}
		return nil
	})
	c.ok("adopt_node", map[string]any{"node_id": "head-1", "role": "head"}, nil)
	c.ok("adopt_node", map[string]any{"node_id": "tracks-1", "role": "tracks"}, nil)
	w := newWitness(t, ar, "saint.console.alerts", "saint.nodes.head-1.alert", "saint.nodes.evil.alert")

	rogue, err := dialRaw(ar.url, ar.nodeKey(t, "tracks-1"), natsbus.NodeClientName("tracks-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.nc.Close()
	forged := `{"level":"critical","message":"e-stop released by the operator","source":"server"}`
	_ = rogue.nc.Publish("saint.console.alerts", []byte(forged))
	if got := w.got("saint.console.alerts", rogue.nc); len(got) > 0 {
		t.Errorf("tracks-1 posted on the console's topic: %q", got)
	}
	_ = rogue.nc.Publish("saint.nodes.head-1.alert", []byte(forged))
	if got := w.got("saint.nodes.head-1.alert", rogue.nc); len(got) > 0 {
		t.Errorf("tracks-1 raised an alert as head-1: %q", got)
	}
	fresh, _ := nkeys.CreateUser()
	evil, err := dialRaw(ar.url, fresh, natsbus.NodeClientName("evil"))
	if err != nil {
		t.Fatal(err)
	}
	defer evil.nc.Close()
	_ = evil.nc.Publish("saint.nodes.evil.alert", []byte(forged))
	if got := w.got("saint.nodes.evil.alert", evil.nc); len(got) > 0 {
		t.Errorf("an unadopted key raised an alert: %q", got)
	}

	// Its own topic: relayed, naming tracks-1 whatever it claims.
	_ = rogue.nc.Publish("saint.nodes.tracks-1.alert", []byte(`{"level":"error","message":"left track jammed","source":"safety"}`))
	var seen []msg.ConsoleAlert
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		for _, raw := range w.got("saint.console.alerts", rogue.nc) {
			var a msg.ConsoleAlert
			if err := json.Unmarshal([]byte(raw), &a); err != nil {
				t.Fatalf("console alert %q: %v", raw, err)
			}
			seen = append(seen, a)
		}
		if len(seen) == 0 {
			return errors.New("tracks-1's own alert has not reached the console")
		}
		return nil
	})
	if len(seen) != 1 || seen[0].Source != "tracks-1" || seen[0].Message != "left track jammed" || seen[0].Level != msg.AlertError {
		t.Errorf("at the console: %+v, want only tracks-1's alert, naming tracks-1", seen)
	}
}

func mustRead(t *testing.T, path string) nkeys.KeyPair {
	kp, err := natsbus.ReadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// replaySigner signs a fixed nonce, whatever the server sends: a
// signature captured from another connection.
type replaySigner struct{ kp nkeys.KeyPair }

func (r replaySigner) Sign([]byte) ([]byte, error) { return r.kp.Sign([]byte("another nonce")) }
func (r replaySigner) PublicKey() (string, error)  { return r.kp.PublicKey() }

func isNilKey(s signer) bool { kp, ok := s.(nkeys.KeyPair); return ok && kp == nil }

// BenchmarkAdoptNodeAuthenticated is BenchmarkAdoptNode on the
// authenticated bus: the adoption also writes the grant and reconnects the
// node under its role's permissions before calling it.
func BenchmarkAdoptNodeAuthenticated(b *testing.B) {
	ar := newAuthRobot(b, map[string]simboard.Profile{"bench-head": simboard.Head})
	c := dialWS(b, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
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

// A device that took an unadopted node's id with its own key is rejected
// over the WebSocket API: the adopt page's key is named, the device is
// disconnected and refused, and the id is free for the node's key. A key
// the id does not connect with is refused on bus_key. The rejection is
// listed, and allow_node_key lifts it.
func TestRejectNodeKeyOverTheAPI(t *testing.T) {
	ar := newAuthRobot(t, nil)
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	squatter, _ := nkeys.CreateUser()
	squatterKey, _ := squatter.PublicKey()
	sq, err := dialRaw(ar.url, squatter, natsbus.NodeClientName("arm-9"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.nc.Close()
	nodeKP := ar.nodeKey(t, "arm-9")
	if _, err := dialRaw(ar.url, nodeKP, natsbus.NodeClientName("arm-9")); err == nil {
		t.Fatal("the nodeKP node connected while the squatter holds its id")
	}

	realKey, _ := nodeKP.PublicKey()
	if r := c.call("reject_node_key", map[string]any{"node_id": "arm-9", "bus_key": realKey}); r.Status == "ok" || r.Error.Field != "bus_key" {
		t.Fatalf("rejecting a key arm-9 does not connect with: %+v", r)
	}
	c.ok("reject_node_key", map[string]any{"node_id": "arm-9", "bus_key": squatterKey}, nil)
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if !sq.nc.IsClosed() {
			return errors.New("the squatter is still connected")
		}
		return nil
	})
	if _, err := dialRaw(ar.url, squatter, natsbus.NodeClientName("arm-10")); err == nil {
		t.Error("the rejected key connected under another id")
	}
	rc, err := dialRaw(ar.url, nodeKP, natsbus.NodeClientName("arm-9"))
	if err != nil {
		t.Fatalf("the nodeKP node after the rejection: %v", err)
	}
	rc.nc.Close()

	var list struct {
		Keys []busaccess.Rejection `json:"keys"`
	}
	c.ok("list_rejected_keys", nil, &list)
	if len(list.Keys) != 1 || list.Keys[0].Key != squatterKey || list.Keys[0].NodeID != "arm-9" {
		t.Errorf("list_rejected_keys %+v", list)
	}
	c.ok("allow_node_key", map[string]any{"bus_key": squatterKey}, nil)
	if r := c.call("allow_node_key", map[string]any{"bus_key": squatterKey}); r.Status == "ok" || r.Error.Field != "bus_key" {
		t.Errorf("allowing a key that is not rejected: %+v", r)
	}
	again, err := dialRaw(ar.url, squatter, natsbus.NodeClientName("arm-10"))
	if err != nil {
		t.Fatalf("the key allowed again: %v", err)
	}
	again.nc.Close()
}

// A node's key enrolled over the WebSocket API (what saintctl nodes enrol
// and flash_node.sh do) is listed, and the adopt list marks the node that
// connects with it as enrolled; one that was not enrolled is not marked.
// Keys that cannot be enrolled are refused on bus_key.
func TestEnrolNodeOverTheAPI(t *testing.T) {
	ar := newAuthRobot(t, map[string]simboard.Profile{"head-1": simboard.Head, "spare-1": simboard.Bare})
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	headKey, _ := ar.nodeKey(t, "head-1").PublicKey()
	type row struct {
		NodeID   string `json:"node_id"`
		BusKey   string `json:"bus_key"`
		Enrolled bool   `json:"bus_key_enrolled"`
	}
	unadopted := func() (map[string]row, error) {
		var l struct {
			Nodes []row `json:"nodes"`
		}
		r := c.call("list_unadopted", nil)
		if err := json.Unmarshal(r.Data, &l); err != nil {
			return nil, err
		}
		out := map[string]row{}
		for _, n := range l.Nodes {
			out[n.NodeID] = n
		}
		if len(out) != 2 {
			return out, fmt.Errorf("unadopted %+v, want head-1 and spare-1", l.Nodes)
		}
		return out, nil
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		_, err := unadopted()
		return err
	})

	var enrolled struct {
		Success  bool   `json:"success"`
		CASHA256 string `json:"ca_sha256"`
	}
	c.ok("enrol_node", map[string]any{"node_id": "head-1", "bus_key": headKey}, &enrolled)
	if !enrolled.Success {
		t.Fatalf("enrol_node: %+v", enrolled)
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		un, err := unadopted()
		if err != nil {
			return err
		}
		if h := un["head-1"]; h.BusKey != headKey || !h.Enrolled {
			return fmt.Errorf("head-1 listed as %+v, want enrolled with %s", h, headKey)
		}
		if s := un["spare-1"]; s.BusKey == "" || s.Enrolled {
			return fmt.Errorf("spare-1 listed as %+v, want its key and not enrolled", s)
		}
		return nil
	})
	var list struct {
		Nodes []busaccess.Enrolment `json:"nodes"`
	}
	c.ok("list_enrolled_nodes", nil, &list)
	if len(list.Nodes) != 1 || list.Nodes[0].NodeID != "head-1" || list.Nodes[0].Key != headKey {
		t.Errorf("list_enrolled_nodes %+v", list)
	}
	for _, p := range []map[string]any{
		{"node_id": "head-2", "bus_key": headKey},
		{"node_id": "head-2", "bus_key": "SUAKEY"},
	} {
		if r := c.call("enrol_node", p); r.Status == "ok" || r.Error.Field != "bus_key" {
			t.Errorf("enrol_node %v: %+v, want refused on bus_key", p, r)
		}
	}
	if r := c.call("enrol_node", map[string]any{"node_id": "no such id", "bus_key": headKey}); r.Status == "ok" || r.Error.Field != "node_id" {
		t.Errorf("enrol_node with a bad id: %+v", r)
	}
	c.ok("unenrol_node", map[string]any{"node_id": "head-1"}, nil)
	if r := c.call("unenrol_node", map[string]any{"node_id": "head-1"}); r.Status == "ok" || r.Error.Field != "node_id" {
		t.Errorf("unenrolling twice: %+v", r)
	}
}
