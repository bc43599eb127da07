package server_test

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/busaccess"
	simboard "github.com/saint-os/saint/sim/board"
)

// TestServiceRepliesGoOnlyToInboxes is the reply-subject injection: a
// client sends the server's services requests that name a role's command
// topic as their reply subject, so that the server, with its own rights,
// would publish its answer there (an e-stop released by a firmware
// check's answer). From a fresh unadopted key and from an adopted node's
// key every service they may reach is tried, and from the tools' key
// every service the server serves (as the broker lists the server's
// service connection's subscriptions), each with every command topic of
// every role; then 5,000 more at once. Nothing reaches a command topic,
// the refusals are counted and reported in one activity event, and the
// roles do not take a reply envelope sent on their command topics for a
// command: the latched e-stop stays latched, the head stays where it was.
func TestServiceRepliesGoOnlyToInboxes(t *testing.T) {
	ar := newAuthRobot(t, map[string]simboard.Profile{"head-1": simboard.Head, "tracks-1": simboard.Tracks})
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if u := c.ids("list_unadopted"); !u["head-1"] || !u["tracks-1"] {
			return fmt.Errorf("unadopted: %v", u)
		}
		return nil
	})
	for id, role := range map[string]string{"head-1": "head", "tracks-1": "tracks"} {
		key, _ := ar.nodeKey(t, id).PublicKey()
		c.ok("adopt_node", map[string]any{"node_id": id, "role": role, "bus_key": key}, nil)
	}

	// The robot's state to keep: the tracks' e-stop latched, the head
	// turned away from 0/0.
	tools, err := dialRaw(ar.url, mustRead(t, ar.auth.KeyFile(busaccess.ToolsKeyFile)), "tool")
	if err != nil {
		t.Fatal(err)
	}
	defer tools.nc.Close()
	state := newStateWatch(t, tools.nc)
	const pan, tilt = 30, 15
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_ = tools.nc.Publish("saint.tracks.estop", []byte(`{"active":true,"source":"test"}`))
		_ = tools.nc.Publish("saint.head.cmd", []byte(fmt.Sprintf(`{"pan":%d,"tilt":%d,"roll":0,"speed":1}`, pan, tilt)))
		return state.holds(pan, tilt)
	})

	commands := busaccess.CommandSubjects("")
	w := newWitness(t, ar, commands...)
	services := servedServices(t, ar)
	if !contains(services, "_srv.saint.firmware.check") || !contains(services, "_srv.saint.system.status") || len(services) < 15 {
		t.Fatalf("the server's service connection subscribes to %d services: %v", len(services), services)
	}
	t.Logf("%d services, %d command topics", len(services), len(commands))

	fresh, _ := nkeys.CreateUser()
	attackers := []struct {
		id  string
		key nkeys.KeyPair
	}{
		{"evil", fresh},                     // enrolled, never adopted
		{"head-1", ar.nodeKey(t, "head-1")}, // the adopted head, gone rogue
		{"", mustRead(t, ar.auth.KeyFile(busaccess.ToolsKeyFile))}, // reaches every service
	}
	flood := func(a *rawClient, service string, n int) {
		for i := 0; i < n; i++ {
			if err := a.nc.PublishRequest(service, "saint.tracks.estop", []byte(`{"node_id":"evil","current_version":"0.0.1","hardware_model":"sim"}`)); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	// A flood from the fresh key on a service it may call: not one
	// publish on the subject it names, every reply refused and counted,
	// one event in the activity log.
	evil, err := dialRaw(ar.url, fresh, natsbus.NodeClientName("evil"))
	if err != nil {
		t.Fatal(err)
	}
	defer evil.nc.Close()
	const floodSize = 5000
	flood(evil, "_srv.saint.firmware.check", floodSize)
	// The service answers in order: once this request is answered, every
	// one of the flood's has been.
	barrier, err := evil.nc.SubscribeSync(natsbus.NodeInboxPrefix("evil") + ".barrier")
	if err != nil {
		t.Fatal(err)
	}
	_ = evil.nc.PublishRequest("_srv.saint.firmware.check", natsbus.NodeInboxPrefix("evil")+".barrier", []byte(`{"node_id":"evil","current_version":"0.0.1","hardware_model":"sim"}`))
	if _, err := barrier.NextMsg(20 * time.Second); err != nil {
		t.Fatalf("a request after the flood: %v", err)
	}
	if got := w.got("saint.tracks.estop", evil.nc); len(got) > 0 {
		t.Errorf("the flood published %d messages on saint.tracks.estop, the first %.100q", len(got), got[0])
	}
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if n := ar.srvBus.RefusedReplies(); n != floodSize {
			return fmt.Errorf("%d replies refused, want %d", n, floodSize)
		}
		return nil
	})
	refusalEvents := func() int {
		events, _ := ar.srv.Activity().Query(activity.Filter{Level: "WARN", Source: "bus", Search: "service reply to"})
		return len(events)
	}
	bustest.CheckFor(t, 2*time.Second, 20*time.Millisecond, func() error {
		if n := refusalEvents(); n != 1 {
			return fmt.Errorf("%d refused-reply events in the activity log, want 1", n)
		}
		return nil
	})

	for _, at := range attackers {
		name := at.id
		if name == "" {
			name = "tools"
		}
		t.Run(name, func(t *testing.T) {
			conn := "tool"
			if at.id != "" {
				conn = natsbus.NodeClientName(at.id)
			}
			a, err := dialRaw(ar.url, at.key, conn)
			if err != nil {
				t.Fatal(err)
			}
			defer a.nc.Close()
			inbox := nats.NewInbox()
			if at.id != "" {
				inbox = natsbus.NodeInboxPrefix(at.id) + ".check"
			}
			answered, err := a.nc.SubscribeSync(inbox)
			if err != nil {
				t.Fatal(err)
			}
			sent := 0
			for _, s := range services {
				// A per-node service is called under the caller's own id,
				// the one name the broker lets a node call it by.
				own := at.id
				if own == "" {
					own = "tracks-1"
				}
				s = strings.ReplaceAll(s, "*", own)
				if rest, ok := strings.CutSuffix(s, ">"); ok {
					s = rest + "any"
				}
				for _, cmd := range commands {
					_ = a.nc.PublishRequest(s, cmd, []byte(`{}`))
					sent++
				}
			}
			// The same client asking properly is answered: the server
			// still serves it, in its inbox.
			_ = a.nc.PublishRequest("_srv.saint.firmware.check", inbox, []byte(`{"node_id":"evil","current_version":"0.0.1","hardware_model":"sim"}`))
			if _, err := answered.NextMsg(5 * time.Second); err != nil {
				t.Errorf("a request with its own inbox as reply subject: %v", err)
			}
			t.Logf("%d requests sent", sent)
		})
	}
	// Each of the tools' requests has its reply refused, as the flood's.
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if n, want := ar.srvBus.RefusedReplies(), uint64(floodSize+len(services)*len(commands)); n < want {
			return fmt.Errorf("%d replies refused after the flood and the tools' requests, want at least %d", n, want)
		}
		return nil
	})
	// The server's own commands and alerts flow meanwhile; no reply is
	// among them.
	for _, cmd := range commands {
		for _, g := range w.got(cmd, tools.nc) {
			if isReplyEnvelope(g) {
				t.Errorf("%s: a request's reply was published there: %.120s", cmd, g)
			}
		}
	}
	// Still one event: refusals are summed up once a minute.
	if n := refusalEvents(); n != 1 {
		t.Errorf("%d refused-reply events in the activity log, want 1", n)
	}

	// What such a reply would have carried, sent by a client that may
	// publish there: the roles do not take it for a command.
	for subject, envelope := range map[string]string{
		"saint.tracks.estop":   `{"result":{"update_available":false}}`,
		"saint.head.cmd":       `{"result":{"success":true}}`,
		"saint.tracks.cmd_vel": `{"error":"bus: service busy, too many requests waiting"}`,
	} {
		if err := tools.nc.Publish(subject, []byte(envelope)); err != nil {
			t.Fatal(err)
		}
	}
	_ = tools.nc.Flush()

	// The robot is as it was: fresh states from both roles show the e-stop
	// latched and the head where it was sent.
	state.reset()
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if state.fresh() < 3 {
			return fmt.Errorf("waiting for fresh states (%d)", state.fresh())
		}
		return nil
	})
	if err := state.holds(pan, tilt); err != nil {
		t.Error(err)
	}
}

// servedServices are the subjects the server's service connection
// subscribes to, as the broker lists them: every service the server
// registered.
func servedServices(t *testing.T, ar *authRobot) []string {
	t.Helper()
	cz, err := ar.ns.NATS().Connz(&natsserver.ConnzOptions{Subscriptions: true, Limit: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ci := range cz.Conns {
		if ci.Name == natsbus.ServerServicesName {
			out = append(out, ci.Subs...)
		}
	}
	sort.Strings(out)
	return out
}

func isReplyEnvelope(data string) bool {
	var env map[string]json.RawMessage
	if json.Unmarshal([]byte(data), &env) != nil {
		return false
	}
	_, result := env["result"]
	_, failed := env["error"]
	return result || failed
}

// stateWatch keeps the tracks' and the head's latest states.
type stateWatch struct {
	tracks chan msg.TrackState
	head   chan msg.HeadState
	n      chan struct{}

	lastTracks             msg.TrackState
	lastHead               msg.HeadState
	freshTracks, freshHead int // states since reset
}

func newStateWatch(t *testing.T, nc *nats.Conn) *stateWatch {
	s := &stateWatch{tracks: make(chan msg.TrackState, 4096), head: make(chan msg.HeadState, 4096), n: make(chan struct{}, 8192)}
	sub := func(subject string, f func([]byte)) {
		if _, err := nc.Subscribe(subject, func(m *nats.Msg) { f(m.Data) }); err != nil {
			t.Fatal(err)
		}
	}
	sub("saint.tracks.state", func(data []byte) {
		var st msg.TrackState
		if json.Unmarshal(data, &st) == nil {
			select {
			case s.tracks <- st:
			default:
			}
		}
	})
	sub("saint.head.state", func(data []byte) {
		var st msg.HeadState
		if json.Unmarshal(data, &st) == nil {
			select {
			case s.head <- st:
			default:
			}
		}
	})
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// drain takes the states received so far and returns how many.
func (s *stateWatch) drain() (tracks, head int) {
	for {
		select {
		case st := <-s.tracks:
			s.lastTracks = st
			tracks++
		case st := <-s.head:
			s.lastHead = st
			head++
		default:
			return tracks, head
		}
	}
}

// reset forgets the counts of fresh states.
func (s *stateWatch) reset() { s.drain(); s.freshTracks, s.freshHead = 0, 0 }

// fresh is how many of each role's states arrived since reset, the
// fewer of the two.
func (s *stateWatch) fresh() int {
	tr, hd := s.drain()
	s.freshTracks += tr
	s.freshHead += hd
	return min(s.freshTracks, s.freshHead)
}

// holds reports whether the latest states show the e-stop latched and
// the head at pan, tilt.
func (s *stateWatch) holds(pan, tilt float64) error {
	s.drain()
	if !s.lastTracks.EStopActive {
		return fmt.Errorf("tracks state %+v: e-stop not latched", s.lastTracks)
	}
	if math.Abs(float64(s.lastHead.Pan)-pan) > 0.5 || math.Abs(float64(s.lastHead.Tilt)-tilt) > 0.5 {
		return fmt.Errorf("head at pan %.1f tilt %.1f, want %v, %v", s.lastHead.Pan, s.lastHead.Tilt, pan, tilt)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// TestBrokerRefusesRepliesOutsideInboxes: what the broker itself lets a
// responder do, whatever its client code. The server's key on its service
// connection may answer in an inbox and publish nowhere else; an adopted
// node, subscribed to its own prefix, cannot use the reply subject of its
// own status (naming the tracks' e-stop) to publish there, as NATS's
// response permission would let it.
func TestBrokerRefusesRepliesOutsideInboxes(t *testing.T) {
	ar := newAuthRobot(t, map[string]simboard.Profile{"head-1": simboard.Head})
	c := dialWS(t, "ws://"+ar.srv.Addrs()["ws"]+"/saint", ar.srv.Token())
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if u := c.ids("list_unadopted"); !u["head-1"] {
			return fmt.Errorf("unadopted: %v", u)
		}
		return nil
	})
	key, _ := ar.nodeKey(t, "head-1").PublicKey()
	c.ok("adopt_node", map[string]any{"node_id": "head-1", "role": "head", "bus_key": key}, nil)
	w := newWitness(t, ar, "saint.tracks.estop", "_INBOX.witness")

	svc, err := dialRaw(ar.url, ar.auth.ServerKey(), natsbus.ServerServicesName)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.nc.Close()
	_ = svc.nc.Publish("saint.tracks.estop", []byte(`{"result":{}}`))
	_ = svc.nc.Publish("_INBOX.witness", []byte(`{"result":{}}`))
	if got := w.got("saint.tracks.estop", svc.nc); len(got) > 0 {
		t.Errorf("the service connection published on a topic: %q", got)
	}
	if got := w.got("_INBOX.witness", svc.nc); len(got) != 1 {
		t.Errorf("the service connection's answer in an inbox: delivered %q, want one", got)
	}
	if err := firstError(svc); err == nil || !strings.Contains(err.Error(), "saint.tracks.estop") {
		t.Errorf("the broker reported %v, want a permission violation on saint.tracks.estop", err)
	}

	head, err := dialRaw(ar.url, ar.nodeKey(t, "head-1"), natsbus.NodeClientName("head-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer head.nc.Close()
	answered := make(chan struct{}, 1)
	loop, err := head.nc.Subscribe("saint.head.state", func(m *nats.Msg) {
		if m.Reply == "saint.tracks.estop" {
			_ = m.Respond([]byte(`{"active":false,"source":"loop"}`))
			answered <- struct{}{}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Unsubscribe()
	if err := head.nc.PublishRequest("saint.head.state", "saint.tracks.estop", []byte(`{"pan":0}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-answered:
	case <-time.After(5 * time.Second):
		t.Fatal("the head did not get its own status back")
	}
	if got := w.got("saint.tracks.estop", head.nc); len(got) > 0 {
		t.Errorf("the head answered its own status on the e-stop: %q", got)
	}
}

// firstError waits for the first error the broker sent c.
func firstError(c *rawClient) error {
	select {
	case err := <-c.errs:
		return err
	case <-time.After(5 * time.Second):
		return nil
	}
}
