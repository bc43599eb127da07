package natsbus

import (
	"testing"
	"time"
)

// The pauses between reconnect attempts: none before the first, then
// doubling from the base up to the bound, each drawn between half and
// all of that.
func TestReconnectDelay(t *testing.T) {
	const wait, most = 100 * time.Millisecond, 2 * time.Second
	for _, tc := range []struct {
		attempts int
		full     time.Duration
	}{{2, wait}, {3, 2 * wait}, {4, 4 * wait}, {6, 16 * wait}, {7, most}, {1000, most}, {1 << 30, most}} {
		for _, r := range []float64{0, 0.5, 0.999999} {
			got := reconnectDelay(tc.attempts, wait, most, r)
			if got < tc.full/2 || got > tc.full {
				t.Errorf("attempt %d, r %g: %v, want between %v and %v", tc.attempts, r, got, tc.full/2, tc.full)
			}
		}
		if lo, hi := reconnectDelay(tc.attempts, wait, most, 0), reconnectDelay(tc.attempts, wait, most, 0.999999); lo >= hi {
			t.Errorf("attempt %d: no jitter (%v to %v)", tc.attempts, lo, hi)
		}
	}
	if got := reconnectDelay(1, wait, most, 0.7); got != 0 {
		t.Errorf("before the first attempt: %v, want none", got)
	}
}

func TestKeyFingerprint(t *testing.T) {
	key := "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"
	if got, want := KeyFingerprint(key), "DXU4 RCSJ NZOI QHZN"; got != want {
		t.Errorf("KeyFingerprint = %q, want %q", got, want)
	}
	if got := KeyFingerprint("UABC"); got != "UABC" {
		t.Errorf("a short key: %q", got)
	}
}
