package bustest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
)

// CheckFor calls f every interval until it returns nil, and fails the test
// with f's last error if that has not happened within total. Tests poll
// with it instead of sleeping a guessed amount.
func CheckFor(t testing.TB, total, interval time.Duration, f func() error) {
	t.Helper()
	var err error
	if !Poll(total, interval, func() bool { err = f(); return err == nil }) {
		t.Fatalf("condition not met after %v: %v", total, err)
	}
}

// Poll calls ok every interval until it returns true or total has passed,
// and reports whether it did. It is for the waits whose shortfall the
// caller reports itself (a benchmark counting what arrived).
func Poll(total, interval time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(total)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// WaitUntil calls ok every 5 ms until it returns true, and fails the test
// naming what it waited for if that has not happened within total. It is
// CheckFor for conditions that have no error of their own to report.
func WaitUntil(t testing.TB, total time.Duration, what string, ok func() bool) {
	t.Helper()
	CheckFor(t, total, 5*time.Millisecond, func() error {
		if ok() {
			return nil
		}
		return fmt.Errorf("waiting for %s", what)
	})
}

// RunExecutor returns a wall-clock executor running on its own goroutine
// until the test ends.
func RunExecutor(t testing.TB) *executor.Executor {
	ex := executor.New(nil)
	StartExecutor(t, ex)
	return ex
}

// StartExecutor runs ex on a new goroutine until the test ends. Tests
// create an executor without starting it when they need messages to pile
// up first.
func StartExecutor(t testing.TB, ex *executor.Executor) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ex.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// Recorder collects messages handed to its Handler; it is safe to read
// from the test goroutine while an executor writes to it.
type Recorder struct {
	mu   sync.Mutex
	msgs []bus.Msg
}

// Handler records m.
func (r *Recorder) Handler(m bus.Msg) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
}

// Msgs returns a copy of what has been recorded so far.
func (r *Recorder) Msgs() []bus.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bus.Msg(nil), r.msgs...)
}

// Len returns how many messages have been recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

// WaitLen waits (up to 5 s) until at least n messages are recorded.
func (r *Recorder) WaitLen(t testing.TB, n int) {
	t.Helper()
	CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if got := r.Len(); got < n {
			return fmt.Errorf("recorded %d messages, want %d", got, n)
		}
		return nil
	})
}

// Ints decodes every recorded payload as an int.
func (r *Recorder) Ints(t testing.TB) []int {
	t.Helper()
	var out []int
	for _, m := range r.Msgs() {
		var n int
		if err := json.Unmarshal(m.Data, &n); err != nil {
			t.Fatalf("payload %q on %s: %v", m.Data, m.Topic, err)
		}
		out = append(out, n)
	}
	return out
}

// Topics returns the topic of every recorded message.
func (r *Recorder) Topics() []string {
	var out []string
	for _, m := range r.Msgs() {
		out = append(out, m.Topic)
	}
	return out
}

// WaitReceived waits (up to 5 s) until sub's transport has delivered at
// least n messages to its queue, whether or not its executor has run them.
func WaitReceived(t testing.TB, sub bus.Subscription, n uint64) {
	t.Helper()
	CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		st, ok := bus.SubscriptionStats(sub)
		if !ok {
			return fmt.Errorf("subscription %T does not report stats", sub)
		}
		if st.Received < n {
			return fmt.Errorf("received %d, want %d", st.Received, n)
		}
		return nil
	})
}
