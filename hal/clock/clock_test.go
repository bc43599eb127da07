package clock

import (
	"sync"
	"testing"
	"time"
)

func TestVirtualMovesOnlyForward(t *testing.T) {
	v := NewVirtual(time.Time{})
	if !v.Now().Equal(Epoch()) {
		t.Fatalf("zero start reads %v, want the epoch", v.Now())
	}
	v.Advance(1500 * time.Millisecond)
	v.Advance(-time.Hour)
	if got := v.Now().Sub(Epoch()); got != 1500*time.Millisecond {
		t.Fatalf("after advancing 1.5 s (and -1 h) the clock is %v past the epoch", got)
	}
	v.Set(Epoch().Add(time.Second))
	if got := v.Now().Sub(Epoch()); got != 1500*time.Millisecond {
		t.Fatalf("Set to an earlier time moved the clock back to %v", got)
	}
	v.Set(Epoch().Add(3 * time.Second))
	if got := v.Now(); !got.Equal(Epoch().Add(3*time.Second)) || got.Location() != time.UTC {
		t.Fatalf("Set to +3 s reads %v", got)
	}
}

// Readers on other goroutines see a monotonic clock while the owner sets
// and advances it (run with -race).
func TestVirtualConcurrentReaders(t *testing.T) {
	v := NewVirtual(time.Time{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := v.Now()
			for range 10000 {
				now := v.Now()
				if now.Before(last) {
					t.Errorf("clock went back from %v to %v", last, now)
					return
				}
				last = now
			}
		}()
	}
	for i := range 10000 {
		if i%2 == 0 {
			v.Advance(time.Microsecond)
		} else {
			v.Set(v.Now().Add(time.Microsecond))
		}
	}
	wg.Wait()
	if got := v.Now().Sub(Epoch()); got != 10000*time.Microsecond {
		t.Errorf("clock at %v after 10000 steps of 1 µs", got)
	}
}
