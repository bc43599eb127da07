package stack

import (
	"testing"
	"time"
)

// The machine is read once per interval of wall time however often the
// server asks, and the sample is a real one.
func TestWallHostSamplesOncePerInterval(t *testing.T) {
	h := newWallHost(2 * time.Second)
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return wall }
	first := h.Sample()
	if first.MemoryUsagePct <= 0 {
		t.Fatalf("first sample %+v: no memory use read", first)
	}
	stamp := h.last
	for range 100 {
		wall = wall.Add(10 * time.Millisecond) // the server at 100× real time
		h.Sample()
		h.Addresses()
		if wall.Sub(stamp) < 2*time.Second && h.last != stamp {
			t.Fatalf("resampled %v after the last sample", wall.Sub(stamp))
		}
	}
	wall = wall.Add(2 * time.Second)
	h.Sample()
	if !h.last.Equal(wall) {
		t.Errorf("no new sample 3 s after the last")
	}
}
