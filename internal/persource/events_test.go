package persource

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type recorder struct {
	mu   sync.Mutex
	msgs []string
	got  chan struct{}
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// 1,000 events from one address make one line at once and one with the
// count when the window closes; another address has its own line.
func TestEventsLogTheFirstAndTheCount(t *testing.T) {
	rec := &recorder{got: make(chan struct{}, 1)}
	ev := NewEvents(slog.New(rec), slog.LevelWarn, 30*time.Millisecond, 16, 10, "failed logins", "source", "auth")
	now := time.Now()
	for range 1000 {
		ev.Record("10.0.0.9", now, "failed login from 10.0.0.9")
	}
	ev.Record("10.0.0.7", now, "failed login from 10.0.0.7")
	deadline := time.After(10 * time.Second)
	for {
		rec.mu.Lock()
		msgs := append([]string(nil), rec.msgs...)
		rec.mu.Unlock()
		if len(msgs) == 3 {
			if msgs[0] != "WARN failed login from 10.0.0.9" || msgs[1] != "WARN failed login from 10.0.0.7" ||
				!strings.HasPrefix(msgs[2], "WARN 999 more failed logins from 10.0.0.9 since ") {
				t.Errorf("logged %q", msgs)
			}
			return
		}
		select {
		case <-rec.got:
		case <-deadline:
			t.Fatalf("logged %q, want 3 lines", msgs)
		}
	}
}

// timers runs a Throttle's and an Events' timers by hand.
type timers struct {
	mu  sync.Mutex
	fns []func()
}

func (ts *timers) after(_ time.Duration, f func()) {
	ts.mu.Lock()
	ts.fns = append(ts.fns, f)
	ts.mu.Unlock()
}

// fire runs the timers scheduled so far, in order.
func (ts *timers) fire() {
	ts.mu.Lock()
	fns := ts.fns
	ts.fns = nil
	ts.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// Past the budget, lines of further sources are folded into one summary
// for the window: 500 addresses, each with two events, make budget+1
// lines a window, not 1,000.
func TestEventsBoundedAcrossSources(t *testing.T) {
	rec := &recorder{got: make(chan struct{}, 1)}
	ev := NewEvents(slog.New(rec), slog.LevelWarn, time.Minute, 1000, 5, "failed logins")
	ts := &timers{}
	t0 := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	now := t0
	ev.t.after, ev.now = ts.after, func() time.Time { return now }
	for i := range 500 {
		ev.Record(fmt.Sprintf("10.0.%d.%d", i/256, i%256), t0, "failed login")
		ev.Record(fmt.Sprintf("10.0.%d.%d", i/256, i%256), t0, "failed login")
	}
	// Each source's second event comes when its window closes: the first
	// five as lines, after the first window's summary; the others summed
	// in the second window's summary.
	now = t0.Add(time.Minute)
	ts.fire()
	now = t0.Add(2 * time.Minute)
	ts.fire()
	want := []string{"WARN failed login", "WARN failed login", "WARN failed login", "WARN failed login", "WARN failed login",
		"WARN 495 more failed logins from 495 addresses since 01:00:00",
		"WARN 1 more failed logins from 10.0.0.0 since 01:00:00", "WARN 1 more failed logins from 10.0.0.1 since 01:00:00",
		"WARN 1 more failed logins from 10.0.0.2 since 01:00:00", "WARN 1 more failed logins from 10.0.0.3 since 01:00:00",
		"WARN 1 more failed logins from 10.0.0.4 since 01:00:00",
		"WARN 495 more failed logins from 495 addresses since 01:01:00"}
	if fmt.Sprint(rec.msgs) != fmt.Sprint(want) {
		t.Errorf("logged\n%q\nwant\n%q", rec.msgs, want)
	}
}

// The summary names at most MaxSources addresses and says when more took
// part.
func TestEventsSummaryCapsItsAddresses(t *testing.T) {
	rec := &recorder{got: make(chan struct{}, 1)}
	ev := NewEvents(slog.New(rec), slog.LevelWarn, time.Minute, 100, 5, "failed logins")
	ts := &timers{}
	t0 := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	ev.t.after, ev.now = ts.after, func() time.Time { return t0 }
	for i := range 500 {
		ev.Record(fmt.Sprintf("10.0.%d.%d", i/256, i%256), t0, "failed login")
	}
	ts.fire()
	if n := len(rec.msgs); n != 6 || rec.msgs[5] != "WARN 495 more failed logins from more than 100 addresses since 01:00:00" {
		t.Errorf("logged %q, want 5 lines and a summary of 495 from more than 100 addresses", rec.msgs)
	}
}
