package ws

import (
	"fmt"
	"sync"
	"time"
)

// failureWindow is how often failed logins from one address are reported.
const failureWindow = time.Minute

// maxFailureSources bounds the addresses tracked at once; the oldest
// window is reported and dropped to make room.
const maxFailureSources = 1024

// loginFailures aggregates failed logins per source address, so that a
// loop of wrong tokens makes one activity event per address per minute
// (with the count) instead of one per attempt, which would push the real
// events out of the log.
type loginFailures struct {
	mu   sync.Mutex
	srcs map[string]*failureWindowState
}

type failureWindowState struct {
	start time.Time // when the window's first failure was reported
	count int       // failures since then not yet reported
}

// record counts a failure from addr at now and returns the event text to
// log, or "" while the address's window is open. The first failure of a
// window is reported at once; the ones after it in the window by the next
// report.
func (f *loginFailures) record(addr string, now time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.srcs == nil {
		f.srcs = map[string]*failureWindowState{}
	}
	st := f.srcs[addr]
	if st != nil && now.Sub(st.start) < failureWindow {
		st.count++
		return ""
	}
	text := fmt.Sprintf("failed login from %s: wrong API token", addr)
	if st != nil && st.count > 0 {
		text = fmt.Sprintf("%d more failed logins from %s since %s: wrong API token", st.count+1, addr, st.start.UTC().Format(time.TimeOnly))
	}
	if st == nil && len(f.srcs) >= maxFailureSources {
		f.evictOldest()
	}
	f.srcs[addr] = &failureWindowState{start: now}
	return text
}

func (f *loginFailures) evictOldest() {
	var oldest string
	var at time.Time
	for a, st := range f.srcs {
		if oldest == "" || st.start.Before(at) {
			oldest, at = a, st.start
		}
	}
	delete(f.srcs, oldest)
}
