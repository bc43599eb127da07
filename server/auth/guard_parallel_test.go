package auth

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Wrong tokens sent in parallel from one address (many connections, or
// HTTP/2 streams, at once) are held to the same budget as tokens sent one
// after the other: after Free of them are looked at, the address waits,
// however many were on their way together.
func TestGuardHoldsParallelGuessesToTheBudget(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}
	g := NewGuard(GuardOptions{Now: clk.now, Free: 3, FirstWait: time.Hour, MaxWait: time.Hour})
	var looked atomic.Int64
	valid := func(tok string) bool {
		looked.Add(1)
		// Comparing takes a moment; others arrive meanwhile.
		for range 50 {
			runtime.Gosched()
		}
		return tok == "right"
	}
	const guesses = 200
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			g.Check("10.0.0.9", "http", "wrong", valid)
		}()
	}
	close(start)
	wg.Wait()
	if n := looked.Load(); n != 3 {
		t.Errorf("%d of %d parallel wrong tokens from one address were looked at, want 3 (Free)", n, guesses)
	}
	if v := g.Check("10.0.0.9", "http", "right", valid); v.RetryAfter <= 0 {
		t.Errorf("the right token after the budget was spent: %+v, want a wait", v)
	}
}
