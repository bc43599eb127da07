package busaccess_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/server/busaccess"
)

// plainBroker runs an authenticating broker without TLS on a free port of
// 127.0.0.1: the permissions are the same, and the handshakes cheaper for
// tests that connect hundreds of times.
func plainBroker(t *testing.T, o busaccess.Options) (*busaccess.Authority, *broker.Server) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	a, err := busaccess.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := broker.Start(&broker.Options{Port: -1, Authentication: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	a.Attach(ns.NATS())
	return a, ns
}

// client is a stock NATS connection and the errors the broker sent it.
type client struct {
	nc   *nats.Conn
	errs chan error
}

// dial connects to url with kp under the connection name name.
func dial(url string, kp nkeys.KeyPair, name string) (*client, error) {
	c := &client{errs: make(chan error, 16)}
	pub, _ := kp.PublicKey()
	nc, err := nats.Connect(url, nats.Name(name), nats.NoReconnect(), nats.Nkey(pub, kp.Sign),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case c.errs <- err:
			default:
			}
		}))
	if err != nil {
		return nil, err
	}
	c.nc = nc
	return c, nil
}

// dialNode connects as node id with kp, failing the test if refused.
func dialNode(t *testing.T, url, id string, kp nkeys.KeyPair) *client {
	t.Helper()
	c, err := dial(url, kp, natsbus.NodeClientName(id))
	if err != nil {
		t.Fatalf("node %s: %v", id, err)
	}
	t.Cleanup(c.nc.Close)
	return c
}

func newKey(t *testing.T) (nkeys.KeyPair, string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	return kp, pub
}

// tools connects with the tools' key, which may do everything.
func tools(t *testing.T, a *busaccess.Authority, url string) *nats.Conn {
	t.Helper()
	kp, err := natsbus.ReadKey(a.KeyFile(busaccess.ToolsKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(url, kp, "tools")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.nc.Close)
	return c.nc
}

// received is what sub got once the messages sent by the connections in
// order have arrived: give the publisher first, then the subscriber's own
// connection. Once a connection's flush returns, the broker has handled
// what it sent before, and, for the subscriber, has delivered to it what
// it routed there before.
func received(t *testing.T, sub *nats.Subscription, order ...*nats.Conn) []string {
	t.Helper()
	for _, c := range order {
		_ = c.Flush()
	}
	var out []string
	for {
		m, err := sub.NextMsg(20 * time.Millisecond)
		if err != nil {
			return out
		}
		out = append(out, m.Subject+" "+string(m.Data))
	}
}

func refused(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "authorization")
}

// An unadopted node announces only on its own subject, and only the key
// that holds its id may connect under it: another key cannot announce the
// node, nor take its id while it is connected, nor be adopted in its place
// with the key the administrator was shown.
func TestAnnouncementsAreBoundToTheNodesKey(t *testing.T) {
	a, ns := plainBroker(t, busaccess.Options{})
	url := ns.ClientURL()
	w := tools(t, a, url)
	announcements, err := w.SubscribeSync("saint.nodes.*.announce")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := w.SubscribeSync("saint.nodes.unadopted")
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Flush()

	realKey, realPub := newKey(t)
	evilKey, evilPub := newKey(t)
	node := dialNode(t, url, "pi-1", realKey)
	evil := dialNode(t, url, "evil", evilKey)

	_ = node.nc.Publish("saint.nodes.pi-1.announce", []byte(`{"node_id":"pi-1"}`))
	if got := received(t, announcements, node.nc, w); len(got) != 1 {
		t.Fatalf("the node's own announcement: delivered %q, want it once", got)
	}
	// Another key names pi-1: on pi-1's subject, and on the subject the
	// server relays checked announcements on.
	_ = evil.nc.Publish("saint.nodes.pi-1.announce", []byte(`{"node_id":"pi-1"}`))
	_ = evil.nc.Publish("saint.nodes.unadopted", []byte(`{"node_id":"pi-1"}`))
	if got := append(received(t, announcements, evil.nc, w), received(t, shared, w)...); len(got) > 0 {
		t.Errorf("announcements naming pi-1 from another key were delivered: %q", got)
	}
	// Its own subject it may use (as any unadopted node).
	_ = evil.nc.Publish("saint.nodes.evil.announce", []byte(`{"node_id":"evil"}`))
	if got := received(t, announcements, evil.nc, w); len(got) != 1 {
		t.Errorf("evil's own announcement: delivered %q", got)
	}

	// pi-1 is connected: another key cannot connect under its id.
	if c, err := dial(url, evilKey, natsbus.NodeClientName("pi-1")); !refused(err) {
		if c != nil {
			c.nc.Close()
		}
		t.Fatalf("another key connecting as pi-1 while it is connected: %v, want an authorization violation", err)
	}
	other, _ := newKey(t)
	if c, err := dial(url, other, natsbus.NodeClientName("pi-1")); !refused(err) {
		if c != nil {
			c.nc.Close()
		}
		t.Fatalf("a fresh key connecting as pi-1 while it is connected: %v, want an authorization violation", err)
	}
	if got := a.NodeKey("pi-1"); got != realPub {
		t.Fatalf("pi-1's key is %s, want the node's %s", got, realPub)
	}

	// The node goes away (rebooting) and another key takes its id: the
	// adoption the administrator made on the key shown before is refused.
	node.nc.Close()
	var taken *client
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		c, err := dial(url, evilKey, natsbus.NodeClientName("pi-1"))
		if err != nil {
			return err
		}
		taken = c
		return nil
	})
	t.Cleanup(taken.nc.Close)
	if got := a.NodeKey("pi-1"); got != evilPub {
		t.Fatalf("after the takeover pi-1's key is %s, want %s (the adopt page shows the key connected now)", got, evilPub)
	}
	if err := a.Grant("pi-1", "head", "", realPub); !errors.Is(err, busaccess.ErrKeyChanged) {
		t.Fatalf("Grant with the key shown before: %v, want ErrKeyChanged", err)
	}
	if _, ok := a.Granted("pi-1"); ok {
		t.Fatal("pi-1 granted to the key that took its id")
	}
	// The real node, back, cannot connect while the other key holds the
	// id (the refusal is the administrator's sign).
	if c, err := dial(url, realKey, natsbus.NodeClientName("pi-1")); !refused(err) {
		if c != nil {
			c.nc.Close()
		}
		t.Fatalf("the node connecting while another key holds its id: %v, want an authorization violation", err)
	}
	// Once the other key is gone, the node connects again and is adopted
	// with the key the administrator compared.
	taken.nc.Close()
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		c, err := dial(url, realKey, natsbus.NodeClientName("pi-1"))
		if err != nil {
			return err
		}
		node = c
		return nil
	})
	t.Cleanup(node.nc.Close)
	if err := a.Grant("pi-1", "head", "", realPub); err != nil {
		t.Fatalf("Grant with the node's key: %v", err)
	}
	if g, ok := a.Granted("pi-1"); !ok || g.Key != realPub || g.Role != "head" {
		t.Errorf("grant %+v, %v", g, ok)
	}
	// Adopted, the node announces no more.
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		c, err := dial(url, realKey, natsbus.NodeClientName("pi-1"))
		if err != nil {
			return err
		}
		defer c.nc.Close()
		_ = c.nc.Publish("saint.nodes.pi-1.announce", []byte(`{"node_id":"pi-1"}`))
		_ = c.nc.Publish("saint.head.state", []byte(`{}`))
		if got := received(t, announcements, c.nc, w); len(got) > 0 {
			t.Errorf("an adopted node's announcement was delivered: %q", got)
		}
		select {
		case <-c.errs:
			return nil
		case <-time.After(time.Second):
			return fmt.Errorf("no permission violation reported for the announcement")
		}
	})
}

// events collects what the Authority reports for the activity log.
type events struct {
	mu   sync.Mutex
	msgs []string
}

func (e *events) Enabled(context.Context, slog.Level) bool { return true }
func (e *events) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		e.mu.Lock()
		e.msgs = append(e.msgs, r.Message)
		e.mu.Unlock()
	}
	return nil
}
func (e *events) WithAttrs([]slog.Attr) slog.Handler { return e }
func (e *events) WithGroup(string) slog.Handler      { return e }
func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.msgs...)
}

// clock is a wall clock for the Authority that moves a millisecond at
// each reading (so the unadopted ids are seen in order) and jumps when
// told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *clock) jump(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A device making up node ids cannot lock real new nodes out: an id
// without a connection makes room for a new one (the least recently seen
// first), an id with a connection keeps its place, one address holds at
// most 16 connected ids, and the refusals make one event per address per
// minute with their count.
func TestUnadoptedPlacesCannotBeLocked(t *testing.T) {
	ev := &events{}
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	a, ns := plainBroker(t, busaccess.Options{Now: clk.now})
	a.LogEventsTo(slog.New(ev))
	url := ns.ClientURL()
	tools(t, a, url)
	base := ns.NATS().NumClients()
	// One address brings at most 8 new keys a minute
	// (TestNewKeysPerAddressAreBounded): the clock moves on a minute
	// every 8 here.
	fresh := 0
	budgetedKey := func(t *testing.T) (nkeys.KeyPair, string) {
		if fresh++; fresh%8 == 0 {
			clk.jump(time.Minute)
		}
		return newKey(t)
	}

	// Fifteen nodes stay connected from 127.0.0.1.
	var live []string
	for i := 0; i < 15; i++ {
		id := fmt.Sprintf("live-%d", i)
		kp, _ := budgetedKey(t)
		dialNode(t, url, id, kp)
		live = append(live, id)
	}
	// Then 300 made-up ids come and go, each closed before the next.
	for i := 0; i < 300; i++ {
		kp, _ := budgetedKey(t)
		c, err := dial(url, kp, natsbus.NodeClientName(fmt.Sprintf("junk-%d", i)))
		if err != nil {
			t.Fatalf("junk-%d: %v", i, err)
		}
		c.nc.Close()
		bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
			if n := ns.NATS().NumClients(); n != base+15 {
				return fmt.Errorf("%d clients", n)
			}
			return nil
		})
	}
	// A sixteenth stays connected too.
	kp, _ := budgetedKey(t)
	dialNode(t, url, "live-15", kp)
	live = append(live, "live-15")
	for _, id := range live {
		if a.NodeKey(id) == "" {
			t.Errorf("connected node %s lost its place to made-up ids", id)
		}
	}
	// The oldest made-up ids made room; the newest are kept; no more than
	// the bound in all.
	kept := 0
	for i := 0; i < 300; i++ {
		if a.NodeKey(fmt.Sprintf("junk-%d", i)) != "" {
			kept++
		}
	}
	if want := 256 - 16; kept != want {
		t.Errorf("%d made-up ids remembered, want %d (256 places, 16 held by connected nodes)", kept, want)
	}
	if a.NodeKey("junk-0") != "" || a.NodeKey("junk-299") == "" {
		t.Errorf("junk-0 kept %v, junk-299 kept %v: want the least recently seen forgotten first", a.NodeKey("junk-0") != "", a.NodeKey("junk-299") != "")
	}

	// A seventeenth connected id from the same address is refused, as
	// often as it tries; an event says so once, then the count a minute on.
	if got := ev.list(); len(got) != 0 {
		t.Fatalf("events before any refusal: %q", got)
	}
	for i := 0; i < 5; i++ {
		kp, _ := newKey(t)
		if c, err := dial(url, kp, natsbus.NodeClientName("one-too-many")); !refused(err) {
			if c != nil {
				c.nc.Close()
			}
			t.Fatalf("a 17th connected unadopted id from one address: %v, want an authorization violation", err)
		}
	}
	got := ev.list()
	if len(got) != 1 || !strings.Contains(got[0], "127.0.0.1") || !strings.Contains(got[0], "16 unadopted nodes are connected from 127.0.0.1") {
		t.Fatalf("events after 5 refusals in a minute: %q, want one naming the address and the limit", got)
	}
	clk.jump(time.Minute)
	kp, _ = newKey(t)
	if _, err := dial(url, kp, natsbus.NodeClientName("one-too-many")); !refused(err) {
		t.Fatalf("after a minute: %v, want an authorization violation", err)
	}
	if got := ev.list(); len(got) != 3 || !strings.HasPrefix(got[1], "4 more refused bus connections from 127.0.0.1") ||
		!strings.Contains(got[2], "16 unadopted nodes are connected from 127.0.0.1") {
		t.Errorf("events a minute later: %q, want the count of the 4 held back, then the new refusal", got)
	}
	// A connected node reconnecting keeps its place.
	kp, _ = newKey(t)
	if c, err := dial(url, kp, natsbus.NodeClientName("live-3")); !refused(err) {
		if c != nil {
			c.nc.Close()
		}
		t.Error("another key took a connected node's id")
	}
}

// The console reads the topics it shows (router status, nodes' status,
// power) and its own, and none of the others' commands.
func TestConsoleReadsOnlyWhatItShows(t *testing.T) {
	a, ns := plainBroker(t, busaccess.Options{Dir: filepath.Join(t.TempDir(), "bus")})
	url := ns.ClientURL()
	kp, pub := newKey(t)
	c := dialNode(t, url, "console-1", kp)
	if err := a.Grant("console-1", "console", "", pub); err != nil {
		t.Fatal(err)
	}
	c.nc.Close()
	var console *client
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		cc, err := dial(url, kp, natsbus.NodeClientName("console-1"))
		console = cc
		return err
	})
	t.Cleanup(console.nc.Close)
	w := tools(t, a, url)
	for subject, want := range map[string]bool{
		"saint.router.status":         true,
		"saint.nodes.head-1.status":   true,
		"saint.tracks.power":          true,
		"saint.arms.left.power":       true,
		"saint.console.display":       true,
		"saint.console.alerts":        true,
		"saint.head.cmd":              false,
		"saint.tracks.cmd_vel":        false,
		"saint.router.input":          false,
		"saint.head.state":            false,
		"saint.nodes.head-1.announce": false,
		"saint.livelink.frames":       false,
	} {
		sub, err := console.nc.SubscribeSync(subject)
		if err != nil {
			t.Fatal(err)
		}
		_ = console.nc.Flush()
		_ = w.Publish(subject, []byte(`{}`))
		got := received(t, sub, w, console.nc)
		if want && len(got) != 1 {
			t.Errorf("%s: the console got %q, want the message", subject, got)
		}
		if !want && len(got) > 0 {
			t.Errorf("%s: the console read %q", subject, got)
		}
		_ = sub.Unsubscribe()
	}
	// The alerts it shows are the server's to send, though under its
	// prefix: the console raises its own on its node's alert topic.
	for subject, want := range map[string]bool{
		"saint.console.alerts":        false,
		"saint.nodes.console-1.alert": true,
		"saint.nodes.head-1.alert":    false,
	} {
		sub, err := w.SubscribeSync(subject)
		if err != nil {
			t.Fatal(err)
		}
		_ = w.Flush()
		_ = console.nc.Publish(subject, []byte(`{"level":"critical","message":"x","source":"server"}`))
		got := received(t, sub, console.nc, w)
		if want != (len(got) == 1) {
			t.Errorf("the console publishing on %s: delivered %q, want delivered %v", subject, got, want)
		}
		_ = sub.Unsubscribe()
	}
}

// A device that took a node's id before the node (its key not the one the
// node logs) is rejected by the administrator: its connection is closed,
// it is refused under any id from then on, also after a restart, and the
// real node can connect under the id. A key the id does not connect with
// now, or an adopted node's, is not rejected. Allow lets it in again.
func TestRejectedKeyIsShutOut(t *testing.T) {
	dir := t.TempDir()
	a, ns := plainBroker(t, busaccess.Options{Dir: dir})
	url := ns.ClientURL()
	squatter, squatterKey := newKey(t)
	node, nodeKey := newKey(t)

	// Six connections under n1: more than the ids an Authority kept per
	// key once, all of which a rejection must close.
	var sqs []*client
	for range 6 {
		sqs = append(sqs, dialNode(t, url, "n1", squatter))
	}
	if _, err := dial(url, node, natsbus.NodeClientName("n1")); !refused(err) {
		t.Fatalf("the real node while the squatter holds n1: %v, want refused", err)
	}
	if got := a.NodeKey("n1"); got != squatterKey {
		t.Fatalf("n1's key %s, want the squatter's", got)
	}

	// Not the key n1 connects with: refused, naming what it connects with.
	if err := a.Reject("n1", nodeKey); !errors.Is(err, busaccess.ErrNotRejectable) || !strings.Contains(err.Error(), squatterKey) {
		t.Fatalf("rejecting a key n1 does not connect with: %v", err)
	}
	if err := a.Reject("n1", squatterKey); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for i, c := range sqs {
			if !c.nc.IsClosed() {
				return fmt.Errorf("the rejected key's connection %d is still open", i)
			}
		}
		return nil
	})
	for _, id := range []string{"n1", "n2"} {
		if _, err := dial(url, squatter, natsbus.NodeClientName(id)); !refused(err) {
			t.Errorf("the rejected key connecting as %s: %v, want refused", id, err)
		}
	}
	dialNode(t, url, "n1", node)
	if got := a.NodeKey("n1"); got != nodeKey {
		t.Errorf("n1's key %s after the rejection, want the real node's", got)
	}
	if r := a.Rejected(); len(r) != 1 || r[0].Key != squatterKey || r[0].NodeID != "n1" {
		t.Errorf("rejected %+v", r)
	}

	// An adopted node's key cannot be rejected.
	if err := a.Grant("n1", "head", "", nodeKey); err != nil {
		t.Fatal(err)
	}
	if err := a.Reject("n1", nodeKey); !errors.Is(err, busaccess.ErrNotRejectable) || !strings.Contains(err.Error(), "adopted") {
		t.Errorf("rejecting an adopted node's key: %v", err)
	}

	// The rejection is kept across a restart, until allowed.
	b, err := busaccess.New(busaccess.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns2, err := broker.Start(&broker.Options{Port: -1, Authentication: b})
	if err != nil {
		t.Fatal(err)
	}
	defer ns2.Shutdown()
	b.Attach(ns2.NATS())
	if _, err := dial(ns2.ClientURL(), squatter, natsbus.NodeClientName("n3")); !refused(err) {
		t.Errorf("the rejected key after a restart: %v, want refused", err)
	}
	if ok, err := b.Allow(squatterKey); !ok || err != nil {
		t.Fatalf("allow: %v %v", ok, err)
	}
	c, err := dial(ns2.ClientURL(), squatter, natsbus.NodeClientName("n3"))
	if err != nil {
		t.Fatalf("the key allowed again: %v", err)
	}
	c.nc.Close()
	if ok, _ := b.Allow(squatterKey); ok {
		t.Error("a key allowed twice")
	}
}

// A damaged list of rejected keys stops the authority from starting: the
// keys it held would otherwise be let in again. Null and empty are damage
// too (an empty list is written "[]"); the file stays where it is.
func TestDamagedRejectedKeysRefuseToStart(t *testing.T) {
	for _, content := range []string{`[{"key": 7}`, "null", "", " \n", `[{"key":"UA`} {
		dir := t.TempDir()
		path := filepath.Join(dir, "rejected.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := busaccess.New(busaccess.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "rejected.json") {
			t.Errorf("rejected.json = %q: %v, want an error naming it", content, err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != content {
			t.Errorf("rejected.json = %q was changed: %q, %v", content, b, err)
		}
	}
}

// One address brings at most 8 keys the server has not seen as unadopted
// nodes a minute: a device whose squatting key was rejected cannot take
// the id again at once with key after fresh key. The refusals are one
// event per address per minute; a key already known (a node reconnecting)
// is never counted, and a minute on the address may bring new ones again.
func TestNewKeysPerAddressAreBounded(t *testing.T) {
	ev := &events{}
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	a, ns := plainBroker(t, busaccess.Options{Now: clk.now})
	a.LogEventsTo(slog.New(ev))
	url := ns.ClientURL()
	nodeKP, _ := newKey(t)
	node := dialNode(t, url, "arm-9", nodeKP)
	node.nc.Close()
	for i := 0; i < 7; i++ {
		kp, _ := newKey(t)
		c, err := dial(url, kp, natsbus.NodeClientName(fmt.Sprintf("squat-%d", i)))
		if err != nil {
			t.Fatalf("new key %d of 8: %v", i+2, err)
		}
		c.nc.Close()
	}
	for i := 0; i < 3; i++ {
		kp, _ := newKey(t)
		if c, err := dial(url, kp, natsbus.NodeClientName("arm-9")); !refused(err) {
			if c != nil {
				c.nc.Close()
			}
			t.Fatalf("a 9th new key from one address in a minute: %v, want an authorization violation", err)
		}
	}
	got := ev.list()
	if len(got) != 1 || !strings.Contains(got[0], "127.0.0.1 brought 8 new keys") {
		t.Fatalf("events: %q, want one naming the address and the limit", got)
	}
	// The node's own key is known: it comes back whatever the budget.
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		c, err := dial(url, nodeKP, natsbus.NodeClientName("arm-9"))
		if err != nil {
			return err
		}
		c.nc.Close()
		return nil
	})
	clk.jump(time.Minute)
	kp, _ := newKey(t)
	c, err := dial(url, kp, natsbus.NodeClientName("arm-10"))
	if err != nil {
		t.Fatalf("a new key a minute on: %v", err)
	}
	c.nc.Close()
}
