package consolealerts

import (
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
)

// Limits on what one node puts on the console.
const (
	// Burst alerts of one node are relayed per Window; the rest are
	// dropped until the next window.
	Burst  = 5
	Window = time.Second
	// MaxMessage bounds an alert's text, in bytes.
	MaxMessage = 256
)

// Relay passes the nodes' alerts on to the console. Its methods run on
// the server's executor.
type Relay struct {
	bus   bus.Bus
	log   *slog.Logger
	now   func() time.Time
	nodes map[string]*budget
}

// budget is one node's alerts in its current window.
type budget struct {
	start   time.Time
	sent    int
	dropped int
}

// New returns a relay that publishes on b, logs drops to log and takes
// the time from now.
func New(b bus.Bus, log *slog.Logger, now func() time.Time) *Relay {
	return &Relay{bus: b, log: log, now: now, nodes: map[string]*budget{}}
}

// Register subscribes a relay to every node's alert topic.
func Register(h *feature.Host) *Relay {
	r := New(h.Bus, h.Log, h.Exec.Now)
	feature.Subscribe(h, msg.TopicAllNodeAlerts, bus.QoS{Reliability: bus.Reliable, Depth: 64}, r.Handle)
	return r
}

// Handle takes an alert that arrived on topic, a node's
// msg.NodeAlertTopic, and relays it as that node's; it is the handler of
// a subscription to msg.TopicAllNodeAlerts.
func (r *Relay) Handle(topic string, a msg.ConsoleAlert) {
	if id, ok := msg.NodeOfName(topic); ok && topic == msg.NodeAlertTopic(id) {
		r.FromNode(id, a)
	}
}

// FromNode relays an alert node id raised on its own topic, as node id's.
// It reports whether the alert was relayed.
func (r *Relay) FromNode(id string, a msg.ConsoleAlert) bool {
	if !msg.ValidNodeID(id) {
		return false
	}
	now := r.now()
	b := r.nodes[id]
	if b == nil {
		r.forget(now)
		b = &budget{start: now}
		r.nodes[id] = b
	}
	if now.Sub(b.start) >= Window {
		*b = budget{start: now}
	}
	if b.sent >= Burst {
		if b.dropped++; b.dropped == 1 {
			r.log.Warn("console alerts of a node dropped: it raised more than the console shows",
				"source", "node", "node", id, "limit", Burst, "per", Window.String())
		}
		return false
	}
	b.sent++
	a.Source = id
	switch a.Level {
	case msg.AlertInfo, msg.AlertWarning, msg.AlertError, msg.AlertCritical:
	default:
		a.Level = msg.AlertWarning
	}
	a.Message = truncate(a.Message, MaxMessage)
	if a.Timestamp <= 0 {
		a.Timestamp = float64(now.UnixNano()) / 1e9
	}
	if err := r.bus.Publish(msg.TopicConsoleAlerts, a); err != nil {
		r.log.Warn("console alert publish", "source", "server", "err", err)
	}
	return true
}

// forget drops the budgets of nodes quiet for a window once more than
// maxNodes are kept: the relay remembers only nodes that alert.
func (r *Relay) forget(now time.Time) {
	if len(r.nodes) < maxNodes {
		return
	}
	for id, b := range r.nodes {
		if now.Sub(b.start) >= Window {
			delete(r.nodes, id)
		}
	}
}

// maxNodes is how many nodes' budgets are kept before quiet ones are
// forgotten.
const maxNodes = 256

// truncate cuts s to at most n bytes, before a rune that does not fit.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
