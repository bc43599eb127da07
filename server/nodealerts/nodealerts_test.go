package nodealerts

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// records keeps what the tracker logs.
type records struct{ got []slog.Record }

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.got = append(r.got, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func attr(rec slog.Record, key string) string {
	v := ""
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
		}
		return true
	})
	return v
}

func TestTrackerRateLimitsAndExpires(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	rec := &records{}
	tr := New(slog.New(rec), func() time.Time { return now })
	low := msg.NodeLog{Level: msg.NodeLogWarning, Source: "tracks", Message: "battery low"}

	tr.Add("sim-tracks", low)
	for i := 0; i < 4; i++ {
		now = now.Add(5 * time.Second)
		tr.Add("sim-tracks", low)
	}
	if len(rec.got) != 1 {
		t.Fatalf("%d activity log entries for an alert repeated within %v, want 1", len(rec.got), LogRepeat)
	}
	now = now.Add(LogRepeat)
	tr.Add("sim-tracks", msg.NodeLog{Level: msg.NodeLogWarning, Source: "tracks", Message: "battery low", Suppressed: 2})
	if len(rec.got) != 2 || attr(rec.got[1], "repeated") != "7" || attr(rec.got[1], "node") != "sim-tracks" ||
		attr(rec.got[1], "source") != "tracks" || rec.got[1].Level != slog.LevelWarn {
		t.Fatalf("second entry %+v (repeated %q), want 7 repeats counted", rec.got, attr(rec.got[len(rec.got)-1], "repeated"))
	}
	active := tr.Active("sim-tracks")
	if len(active) != 1 || active[0].Count != 8 || active[0].Last != unix(now) {
		t.Fatalf("active %+v, want one alert raised 8 times", active)
	}
	tr.Add("bad/id", low)
	if len(tr.All()) != 1 {
		t.Errorf("an alert from an invalid node id was kept: %+v", tr.All())
	}
	// Not raised again: no longer active after ActiveFor.
	now = now.Add(ActiveFor)
	if a := tr.Active("sim-tracks"); len(a) != 0 {
		t.Errorf("still active after %v: %+v", ActiveFor, a)
	}
	// A node that raises many different alerts keeps the newest MaxPerNode.
	for i := 0; i < MaxPerNode+5; i++ {
		now = now.Add(time.Millisecond)
		tr.Add("sim-head", msg.NodeLog{Level: msg.NodeLogError, Source: "head", Message: string(rune('a' + i))})
	}
	if a := tr.Active("sim-head"); len(a) != MaxPerNode || a[0].Message != string(rune('a'+MaxPerNode+4)) || a[0].Level != msg.NodeLogError {
		t.Errorf("%d alerts kept, newest %+v; want %d, newest first", len(a), a[0], MaxPerNode)
	}
}
