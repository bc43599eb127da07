package persource

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Events logs one kind of event per source: the first of each window at
// once, the others of the window as one line with their count when the
// window closes ("41 more failed logins from 10.0.0.9 since 12:00:03").
// It is safe for concurrent use.
type Events struct {
	t     Throttle
	log   *slog.Logger
	level slog.Level
	what  string
	attrs []any
}

// NewEvents logs to log at level, at most one event per source per
// window for at most maxSources sources at once. what names the events
// in the plural for the count ("failed logins"); attrs go with every
// event (the "source" attribute of the activity log).
func NewEvents(log *slog.Logger, level slog.Level, window time.Duration, maxSources int, what string, attrs ...any) *Events {
	e := &Events{log: log, level: level, what: what, attrs: attrs}
	e.t = Throttle{Window: window, MaxSources: maxSources, Flush: e.flush}
	return e
}

// Record counts an event from source at now and logs msg with attrs if it
// opens a window; otherwise the event waits in the window's count.
func (e *Events) Record(source string, now time.Time, msg string, attrs ...any) {
	r, ok := e.t.Record(source, now)
	if !ok {
		return
	}
	if r.HeldBack > 0 {
		e.flush(source, r)
	}
	e.log.Log(context.Background(), e.level, msg, append(append([]any{"addr", source}, e.attrs...), attrs...)...)
}

func (e *Events) flush(source string, r Report) {
	e.log.Log(context.Background(), e.level,
		fmt.Sprintf("%d more %s from %s since %s", r.HeldBack, e.what, source, r.Since.UTC().Format(time.TimeOnly)),
		append([]any{"addr", source, "count", r.HeldBack}, e.attrs...)...)
}
