package ws

import (
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/internal/persource"
)

// 1,000 wrong tokens a minute from one address make one event a minute,
// carrying the count; another address has its own window.
func TestLoginFailuresAggregatedPerSourcePerMinute(t *testing.T) {
	f := persource.Throttle{Window: time.Minute, MaxSources: 1024}
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var events []string
	for i := range 3000 {
		now := t0.Add(time.Duration(i) * 60 * time.Millisecond) // 1,000 a minute for 3 minutes
		if e := failedLoginEvent(&f, "10.0.0.9", now); e != "" {
			events = append(events, e)
		}
	}
	if len(events) != 3 {
		t.Fatalf("%d events for 3 minutes of failures, want 3: %q", len(events), events)
	}
	if !strings.Contains(events[0], "10.0.0.9") || !strings.Contains(events[1], "1000 more failed logins") {
		t.Errorf("events %q: want the address and the count", events)
	}
	if e := failedLoginEvent(&f, "10.0.0.7", t0.Add(10*time.Second)); e == "" || !strings.Contains(e, "10.0.0.7") {
		t.Errorf("another address: %q, want its own event", e)
	}
}
