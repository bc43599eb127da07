package persource

import (
	"fmt"
	"testing"
	"time"
)

func TestThrottleReportsOncePerWindowWithTheCount(t *testing.T) {
	th := Throttle{Window: time.Minute, MaxSources: 8}
	t0 := time.Unix(1000, 0)
	if r, ok := th.Record("a", t0); !ok || r.HeldBack != 0 {
		t.Fatalf("first event: %+v %v, want reported with nothing held back", r, ok)
	}
	for i := 1; i <= 4; i++ {
		if _, ok := th.Record("a", t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatalf("event %d inside the window was reported", i)
		}
	}
	if _, ok := th.Record("b", t0.Add(time.Second)); !ok {
		t.Error("another source's first event was held back")
	}
	r, ok := th.Record("a", t0.Add(time.Minute))
	if !ok || r.HeldBack != 4 || !r.Since.Equal(t0) {
		t.Errorf("next window: %+v %v, want 4 held back since %v", r, ok, t0)
	}
	if r, ok := th.Record("a", t0.Add(2*time.Minute)); !ok || r.HeldBack != 0 {
		t.Errorf("a quiet window: %+v %v, want reported with nothing held back", r, ok)
	}
}

func TestThrottleForgetsTheOldestSourceWhenFull(t *testing.T) {
	th := Throttle{Window: time.Minute, MaxSources: 3}
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		th.Record(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Second))
	}
	// A fourth source makes room by forgetting source 0 (the oldest):
	// its next event is reported again at once, inside its old window.
	if _, ok := th.Record("3", t0.Add(3*time.Second)); !ok {
		t.Fatal("a new source was held back")
	}
	if _, ok := th.Record("0", t0.Add(4*time.Second)); !ok {
		t.Error("the forgotten source's event was held back")
	}
	if _, ok := th.Record("2", t0.Add(5*time.Second)); ok {
		t.Error("a tracked source's event inside its window was reported")
	}
	if len(th.srcs) > 3 {
		t.Errorf("%d sources tracked, want at most 3", len(th.srcs))
	}
}

// With Flush set, a window that held events back is closed and told when
// its time is up, though the source sends nothing more.
func TestThrottleFlushesAQuietSourcesCount(t *testing.T) {
	flushed := make(chan Report, 4)
	th := Throttle{Window: 20 * time.Millisecond, MaxSources: 8, Flush: func(src string, r Report) {
		if src == "a" {
			flushed <- r
		}
	}}
	t0 := time.Now()
	th.Record("a", t0)
	th.Record("a", t0)
	th.Record("a", t0)
	select {
	case r := <-flushed:
		if r.HeldBack != 2 || !r.Since.Equal(t0) {
			t.Errorf("flushed %+v, want 2 held back since %v", r, t0)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held-back count was never flushed")
	}
	if r, ok := th.Record("a", t0); !ok || r.HeldBack != 0 {
		t.Errorf("after the flush: %+v %v, want a new window with nothing held back", r, ok)
	}
}
