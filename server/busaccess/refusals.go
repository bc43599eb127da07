package busaccess

import (
	"fmt"
	"time"
)

// reportWindow is how often refusals from one source address are
// reported.
const reportWindow = time.Minute

// maxReportSources bounds the addresses tracked at once; the oldest
// window is dropped to make room.
const maxReportSources = 1024

// refusals aggregates the broker's refusals per source address, so that
// a device looping over connection attempts makes one event per address
// per minute (with the count) instead of one per attempt, which would
// push the real events out of the activity log.
type refusals struct {
	srcs map[string]*refusalWindow
}

type refusalWindow struct {
	start time.Time // when the window's first refusal was reported
	count int       // refusals since then not yet reported
}

// record counts a refusal of why from host at now and returns the event
// text to log, or "" while the address's window is open. The first
// refusal of a window is reported at once; the ones after it in the
// window by the next report. The caller holds the Authority's lock.
func (r *refusals) record(host, why string, now time.Time) string {
	if r.srcs == nil {
		r.srcs = map[string]*refusalWindow{}
	}
	w := r.srcs[host]
	if w != nil && now.Sub(w.start) < reportWindow {
		w.count++
		return ""
	}
	text := fmt.Sprintf("bus connection from %s refused: %s", host, why)
	if w != nil && w.count > 0 {
		text = fmt.Sprintf("%d more bus connections from %s refused since %s (the last: %s)", w.count+1, host, w.start.UTC().Format(time.TimeOnly), why)
	}
	if w == nil && len(r.srcs) >= maxReportSources {
		r.evictOldest()
	}
	r.srcs[host] = &refusalWindow{start: now}
	return text
}

func (r *refusals) evictOldest() {
	var oldest string
	var at time.Time
	for h, w := range r.srcs {
		if oldest == "" || w.start.Before(at) {
			oldest, at = h, w.start
		}
	}
	delete(r.srcs, oldest)
}
