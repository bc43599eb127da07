package node

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/clock"
)

// Alert rate limits: the same message from the same source at most once
// per AlertRepeat (the repeats are counted and reported with the next
// one), and at most AlertBurst alerts in any AlertWindow, so a flapping
// sensor or a loop logging every tick cannot flood the bus or the
// server's log.
const (
	AlertRepeat = 10 * time.Second
	AlertBurst  = 10
	AlertWindow = time.Second
)

// alertLimiter decides which alerts go out. It is safe for concurrent use:
// the node and its role log from the executor, drivers' goroutines may log
// too.
type alertLimiter struct {
	clk clock.Clock

	mu      sync.Mutex
	last    map[string]time.Time
	dropped map[string]int
	window  time.Time
	sent    int
}

func newAlertLimiter(clk clock.Clock) *alertLimiter {
	return &alertLimiter{clk: clk, last: map[string]time.Time{}, dropped: map[string]int{}}
}

// allow reports whether the alert with key may go out now, and how many of
// it were held back since the last one that did.
func (l *alertLimiter) allow(key string) (ok bool, suppressed int) {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) >= AlertWindow {
		l.window, l.sent = now, 0
	}
	if t, seen := l.last[key]; seen && now.Sub(t) < AlertRepeat || l.sent >= AlertBurst {
		l.dropped[key]++
		return false, 0
	}
	l.last[key], l.sent = now, l.sent+1
	suppressed = l.dropped[key]
	delete(l.dropped, key)
	// Forget keys long quiet, so the map stays the size of what is
	// currently being said.
	if len(l.last) > 256 {
		for k, t := range l.last {
			if now.Sub(t) >= AlertRepeat {
				delete(l.last, k)
			}
		}
	}
	return true, suppressed
}

// alertHandler is a slog.Handler that passes every record on to next and
// publishes those at warning level and above as msg.NodeLog, through
// publish, rate-limited.
type alertHandler struct {
	next    slog.Handler
	nodeID  string
	limit   *alertLimiter
	publish func(msg.NodeLog)
	attrs   []slog.Attr // from With, outermost group flattened
	group   string
}

func newAlertHandler(next slog.Handler, nodeID string, clk clock.Clock, publish func(msg.NodeLog)) *alertHandler {
	return &alertHandler{next: next, nodeID: nodeID, limit: newAlertLimiter(clk), publish: publish}
}

func (h *alertHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *alertHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.forward(r)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *alertHandler) forward(r slog.Record) {
	a := msg.NodeLog{NodeID: h.nodeID, Level: msg.NodeLogWarning, Source: "node", Message: r.Message,
		Timestamp: float64(h.limit.clk.Now().UnixNano()) / 1e9}
	if r.Level >= slog.LevelError {
		a.Level = msg.NodeLogError
	}
	add := func(at slog.Attr) bool {
		switch at.Key {
		case "role":
			a.Source = at.Value.String()
		case "node":
		default:
			if a.Attrs == nil {
				a.Attrs = map[string]string{}
			}
			key := at.Key
			if h.group != "" {
				key = h.group + "." + key
			}
			a.Attrs[key] = fmt.Sprint(at.Value.Resolve().Any())
		}
		return true
	}
	for _, at := range h.attrs {
		add(at)
	}
	r.Attrs(add)
	ok, suppressed := h.limit.allow(a.Source + "\x00" + a.Message)
	if !ok {
		return
	}
	a.Suppressed = suppressed
	h.publish(a)
}

func (h *alertHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *alertHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	if c.group == "" {
		c.group = name
	} else {
		c.group += "." + name
	}
	return &c
}
