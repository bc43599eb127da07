package persource

import (
	"sync"
	"time"
)

// Throttle counts events per source. The zero value is not usable: set
// Window and MaxSources. It is safe for concurrent use.
type Throttle struct {
	// Window is how often one source is reported.
	Window time.Duration
	// MaxSources bounds the sources tracked at once; when full, the
	// source whose window opened first is forgotten to make room (its
	// held-back count is lost, not its next report).
	MaxSources int
	// Flush, if set, is called once a window that held events back has
	// lasted Window (measured in real time from the first held-back
	// event, so the count is told even if the source falls silent): the
	// window is closed, r tells its count, and the source's next event
	// opens a new window. Without Flush the count waits for that event.
	Flush func(source string, r Report)

	// after schedules the flushes; nil is time.AfterFunc (tests replace
	// it to run them by hand).
	after func(time.Duration, func())

	mu   sync.Mutex
	srcs map[string]*window
}

type window struct {
	start time.Time // when the window's first event was reported
	count int       // events since then not yet reported
}

// Report is what to tell of an event that Record lets through.
type Report struct {
	// HeldBack is how many events of the source's previous window were
	// not reported, this one not included; 0 for a first event.
	HeldBack int
	// Since is when that previous window opened.
	Since time.Time
}

// Record counts an event from source at now. It answers true with what to
// report when the source's window is not open (the event opens a new
// one), false while it is.
func (t *Throttle) Record(source string, now time.Time) (Report, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.srcs == nil {
		t.srcs = map[string]*window{}
	}
	w := t.srcs[source]
	if w != nil && now.Sub(w.start) < t.Window {
		w.count++
		if w.count == 1 && t.Flush != nil {
			t.schedule(max(t.Window-now.Sub(w.start), 0), func() { t.flush(source, w) })
		}
		return Report{}, false
	}
	var r Report
	if w != nil {
		r = Report{HeldBack: w.count, Since: w.start}
	} else if len(t.srcs) >= t.MaxSources {
		t.forgetOldest()
	}
	t.srcs[source] = &window{start: now}
	return r, true
}

func (t *Throttle) forgetOldest() {
	var oldest string
	var at time.Time
	for s, w := range t.srcs {
		if oldest == "" || w.start.Before(at) {
			oldest, at = s, w.start
		}
	}
	delete(t.srcs, oldest)
}

// flush closes source's window w, if it is still open with events held
// back, and tells Flush.
func (t *Throttle) flush(source string, w *window) {
	t.mu.Lock()
	if t.srcs[source] != w || w.count == 0 {
		t.mu.Unlock()
		return
	}
	delete(t.srcs, source)
	r := Report{HeldBack: w.count, Since: w.start}
	t.mu.Unlock()
	t.Flush(source, r)
}

func (t *Throttle) schedule(d time.Duration, f func()) {
	if t.after != nil {
		t.after(d, f)
		return
	}
	time.AfterFunc(d, f)
}
