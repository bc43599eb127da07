package persource

import (
	"context"
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
	ev := NewEvents(slog.New(rec), slog.LevelWarn, 30*time.Millisecond, 16, "failed logins", "source", "auth")
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
