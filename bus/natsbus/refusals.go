package natsbus

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// refusalWindow is how often refused service replies are summed up in one
// event: a flood of requests naming a topic as their reply subject makes
// one event a minute, not one per request.
const refusalWindow = time.Minute

// refusals counts the service replies a client refused to send, or the
// broker refused to take, and reports them in aggregate: the first at
// once, then, at the end of each window in which more came, one event
// with their count.
type refusals struct {
	window time.Duration

	mu     sync.Mutex
	events *slog.Logger
	total  uint64
	held   uint64      // refused since the last event
	last   string      // the subject of the last refusal
	timer  *time.Timer // the end of the current window; nil when none runs
	closed bool
}

func newRefusals(log *slog.Logger, window time.Duration) *refusals {
	return &refusals{window: window, events: log}
}

func (r *refusals) logTo(l *slog.Logger) {
	r.mu.Lock()
	r.events = l
	r.mu.Unlock()
}

func (r *refusals) count() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// refuse counts a reply to subject that was not sent.
func (r *refusals) refuse(subject string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	r.last = subject
	if r.timer != nil || r.closed {
		r.held++
		return
	}
	r.events.Warn(fmt.Sprintf("service reply to %q refused: a request named it as its reply subject, and services answer only inboxes", subject),
		"source", "bus", "subject", subject)
	r.timer = time.AfterFunc(r.window, r.summarise)
}

// brokerError counts a publish the broker refused on the service
// connection. The service connection publishes nothing but replies, so
// each is a reply refused.
func (r *refusals) brokerError(err error) {
	subject := err.Error()
	if i := strings.IndexByte(subject, '"'); i >= 0 {
		subject = strings.Trim(subject[i:], `"`)
	}
	r.refuse(subject)
}

// summarise reports the refusals held back during the window that ends.
func (r *refusals) summarise() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == 0 || r.closed {
		r.timer = nil
		return
	}
	r.events.Warn(fmt.Sprintf("%d more service replies refused in the last %s, the last to %q: requests named them as their reply subjects, and services answer only inboxes", r.held, r.window, r.last),
		"source", "bus", "count", r.held, "subject", r.last)
	r.held = 0
	r.timer = time.AfterFunc(r.window, r.summarise)
}

// stop ends the reporting, when the client closes.
func (r *refusals) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}
