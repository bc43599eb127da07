package nodealerts

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// Limits.
const (
	// ActiveFor is how long an alert stays active after it was last
	// raised.
	ActiveFor = time.Minute
	// LogRepeat is how often the same alert of a node may go into the
	// activity log.
	LogRepeat = 30 * time.Second
	// MaxPerNode bounds the active alerts kept for one node; the oldest
	// go first.
	MaxPerNode = 20
)

// Alert is one active alert of a node. JSON names are the API's.
type Alert struct {
	Level   string            `json:"level"` // warning, error
	Source  string            `json:"source"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
	// First and Last are when the alert was first and last raised
	// (seconds since the Unix epoch, the server's clock); Count how many
	// times, the node's held-back repeats included.
	First float64 `json:"first"`
	Last  float64 `json:"last"`
	Count int     `json:"count"`

	logged  time.Time // last written to the activity log
	pending int       // repeats not yet in the activity log
	last    time.Time
}

// Tracker keeps the nodes' active alerts. Its methods run on the
// server's executor.
type Tracker struct {
	log   *slog.Logger
	now   func() time.Time
	nodes map[string][]*Alert
}

// New returns a tracker that records into log (the server's logger, whose
// "source" and "node" attributes fill the activity log's fields) with the
// time from now.
func New(log *slog.Logger, now func() time.Time) *Tracker {
	return &Tracker{log: log, now: now, nodes: map[string][]*Alert{}}
}

// Register subscribes the tracker to every node's log topic and offers
// get_node_alerts on h.
func Register(h *feature.Host) *Tracker {
	t := New(h.Log, h.Exec.Now)
	h.SubscribeRaw(msg.TopicNodeLogs, bus.QoS{Reliability: bus.Reliable, Depth: 256}, func(m bus.Msg) {
		var a msg.NodeLog
		if err := json.Unmarshal(m.Data, &a); err != nil {
			h.Log.Warn("node log that does not decode", "source", "node", "topic", m.Topic, "err", err)
			return
		}
		t.Add(nodeOf(m.Topic), a)
	})
	h.Gateway.Handle("management", "get_node_alerts", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var p struct {
			NodeID string `json:"node_id"`
		}
		if len(raw) > 0 && string(raw) != "null" {
			if err := ws.DecodeParams(raw, &p); err != nil {
				return nil, err
			}
		}
		var out any
		err := h.Do(ctx, func() {
			if p.NodeID != "" {
				out = map[string]any{"node_id": p.NodeID, "alerts": t.Active(p.NodeID)}
				return
			}
			out = map[string]any{"nodes": t.All()}
		})
		return out, err
	})
	return t
}

// nodeOf is the node id of a log topic, /saint/node/{id}/log.
func nodeOf(topic string) string {
	return strings.TrimSuffix(strings.TrimPrefix(topic, "/saint/node/"), "/log")
}

// Add takes an alert node published. The node is the one whose topic it
// came on, whatever the message says.
func (t *Tracker) Add(node string, a msg.NodeLog) {
	if !msg.ValidNodeID(node) {
		return
	}
	level := a.Level
	if level != msg.NodeLogError {
		level = msg.NodeLogWarning
	}
	source := a.Source
	if source == "" {
		source = "node"
	}
	now := t.now()
	t.expire(now)
	var cur *Alert
	for _, x := range t.nodes[node] {
		if x.Source == source && x.Message == a.Message && x.Level == level {
			cur = x
		}
	}
	times := 1 + max(a.Suppressed, 0)
	if cur == nil {
		cur = &Alert{Level: level, Source: source, Message: a.Message, Attrs: a.Attrs, First: unix(now)}
		list := append(t.nodes[node], cur)
		if len(list) > MaxPerNode {
			list = list[len(list)-MaxPerNode:]
		}
		t.nodes[node] = list
	}
	cur.Count += times
	cur.Last, cur.last, cur.Attrs = unix(now), now, a.Attrs
	cur.pending += times
	if !cur.logged.IsZero() && now.Sub(cur.logged) < LogRepeat {
		return
	}
	args := []any{"source", source, "node", node}
	for _, k := range sortedKeys(a.Attrs) {
		key := k
		if key == "source" || key == "node" {
			// The activity log's own fields: keep the node's value beside them.
			key = "attr." + key
		}
		args = append(args, key, a.Attrs[k])
	}
	if cur.pending > 1 {
		args = append(args, "repeated", cur.pending)
	}
	lvl := slog.LevelWarn
	if level == msg.NodeLogError {
		lvl = slog.LevelError
	}
	t.log.Log(context.Background(), lvl, a.Message, args...)
	cur.logged, cur.pending = now, 0
}

// Active returns node's active alerts, newest first.
func (t *Tracker) Active(node string) []Alert {
	t.expire(t.now())
	list := t.nodes[node]
	out := make([]Alert, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, *list[i])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Last > out[j].Last })
	return out
}

// All returns the active alerts of every node that has one.
func (t *Tracker) All() map[string][]Alert {
	t.expire(t.now())
	out := map[string][]Alert{}
	for node := range t.nodes {
		out[node] = t.Active(node)
	}
	return out
}

// expire drops alerts not raised for ActiveFor.
func (t *Tracker) expire(now time.Time) {
	for node, list := range t.nodes {
		kept := list[:0]
		for _, a := range list {
			if now.Sub(a.last) < ActiveFor {
				kept = append(kept, a)
			}
		}
		if len(kept) == 0 {
			delete(t.nodes, node)
		} else {
			t.nodes[node] = kept
		}
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
