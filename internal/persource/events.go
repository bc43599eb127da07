package persource

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Events logs one kind of event per source: the first of each window at
// once, the others of the window as one line with their count when the
// window closes ("41 more failed logins from 10.0.0.9 since 12:00:03").
//
// Sources are cheap to an attacker (an IPv6 prefix, the whole of
// 127.0.0.0/8 on the machine itself), so the lines of one window are
// bounded across all sources too: past the budget, what would have been
// a source's line is folded into one summary for the window ("3,120 more
// failed logins from 512 addresses since 12:00:00"). However many sources
// take part, an Events writes at most budget+1 lines per window.
//
// It is safe for concurrent use.
type Events struct {
	t      Throttle
	log    *slog.Logger
	level  slog.Level
	what   string
	attrs  []any
	budget int

	// now reads the clock for the lines told by timers; nil is
	// time.Now (tests run a clock of their own).
	now func() time.Time

	mu     sync.Mutex
	wstart time.Time // when the current window of the budget opened
	spent  int       // lines written in it
	over   overflow  // what was folded since
	gen    int       // counts overflows, so a stale timer does nothing
}

// overflow is what the budget held back: events, from which sources
// (up to the throttle's MaxSources of them), since when.
type overflow struct {
	events int
	srcs   map[string]struct{}
	full   bool // srcs reached MaxSources: more took part
	since  time.Time
}

// NewEvents logs to log at level, at most one line per source per window
// for at most maxSources sources at once, and at most budget lines per
// window in all (plus the summary of the rest). what names the events in
// the plural for the counts ("failed logins"); attrs go with every line
// (the "source" attribute of the activity log).
func NewEvents(log *slog.Logger, level slog.Level, window time.Duration, maxSources, budget int, what string, attrs ...any) *Events {
	e := &Events{log: log, level: level, what: what, attrs: attrs, budget: budget}
	e.t = Throttle{Window: window, MaxSources: maxSources, Flush: func(source string, r Report) {
		e.emit(source, e.clock(), r.HeldBack, e.heldBack(source, r), "count", r.HeldBack)
	}}
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
		e.emit(source, now, r.HeldBack, e.heldBack(source, r), "count", r.HeldBack)
	}
	e.emit(source, now, 1, msg, attrs...)
}

func (e *Events) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

func (e *Events) heldBack(source string, r Report) string {
	return fmt.Sprintf("%d more %s from %s since %s", r.HeldBack, e.what, source, r.Since.UTC().Format(time.TimeOnly))
}

// emit writes a line for count events of source, or folds it into the
// window's summary once the budget is spent.
func (e *Events) emit(source string, now time.Time, count int, msg string, attrs ...any) {
	e.mu.Lock()
	var summary overflow
	if e.wstart.IsZero() || now.Sub(e.wstart) >= e.t.Window {
		summary, e.over = e.over, overflow{}
		e.wstart, e.spent = now, 0
		e.gen++
	}
	write := e.spent < e.budget
	if write {
		e.spent++
	} else {
		if e.over.events == 0 {
			e.over = overflow{srcs: map[string]struct{}{}, since: now}
			e.gen++
			// Tell the summary when the window is up, even if nothing
			// follows.
			gen := e.gen
			e.t.schedule(max(e.t.Window-now.Sub(e.wstart), 0), func() { e.flushOverflow(gen) })
		}
		e.over.events += count
		if len(e.over.srcs) < e.t.MaxSources {
			e.over.srcs[source] = struct{}{}
		} else if _, ok := e.over.srcs[source]; !ok {
			e.over.full = true
		}
	}
	e.mu.Unlock()
	e.logSummary(summary)
	if write {
		e.log.Log(context.Background(), e.level, msg, append(append([]any{"addr", source}, e.attrs...), attrs...)...)
	}
}

// flushOverflow tells the summary of overflow gen, if it is still the
// current one, and closes its window: the next line opens a new one with
// the whole budget.
func (e *Events) flushOverflow(gen int) {
	e.mu.Lock()
	if gen != e.gen {
		e.mu.Unlock()
		return
	}
	summary := e.over
	e.over = overflow{}
	e.wstart = time.Time{}
	e.gen++
	e.mu.Unlock()
	e.logSummary(summary)
}

func (e *Events) logSummary(o overflow) {
	if o.events == 0 {
		return
	}
	from := fmt.Sprintf("%d addresses", len(o.srcs))
	if o.full {
		from = "more than " + from
	}
	e.log.Log(context.Background(), e.level,
		fmt.Sprintf("%d more %s from %s since %s", o.events, e.what, from, o.since.UTC().Format(time.TimeOnly)),
		append([]any{"count", o.events, "addresses", len(o.srcs)}, e.attrs...)...)
}
