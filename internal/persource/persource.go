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
