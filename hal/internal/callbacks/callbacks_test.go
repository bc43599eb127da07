package callbacks

import (
	"sync"
	"testing"
)

func TestAddStopSnapshot(t *testing.T) {
	var s Set[func(int)]
	var got []string
	stopA := s.Add(func(v int) { got = append(got, "a") })
	s.Add(func(v int) { got = append(got, "b") })
	for _, f := range s.Snapshot() {
		f(1)
	}
	stopA()
	stopA() // twice is harmless
	for _, f := range s.Snapshot() {
		f(2)
	}
	if want := "a b b"; join(got) != want {
		t.Errorf("calls %q, want %q", join(got), want)
	}
	if s.Len() != 1 {
		t.Errorf("Len %d after one stop, want 1", s.Len())
	}
}

func TestStopFromInsideACallback(t *testing.T) {
	var s Set[func()]
	var stop func()
	calls := 0
	stop = s.Add(func() { calls++; stop() })
	for range 2 {
		for _, f := range s.Snapshot() {
			f()
		}
	}
	if calls != 1 {
		t.Errorf("a callback that stopped itself ran %d times, want 1", calls)
	}
}

func TestConcurrentUse(t *testing.T) {
	var s Set[func()]
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				stop := s.Add(func() {})
				_ = s.Snapshot()
				stop()
			}
		}()
	}
	wg.Wait()
	if s.Len() != 0 {
		t.Errorf("Len %d after every stop, want 0", s.Len())
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// A snapshot is not changed by later adds and stops, and taking one
// allocates nothing.
func TestSnapshotIsStableAndFree(t *testing.T) {
	var s Set[func() string]
	stopA := s.Add(func() string { return "a" })
	s.Add(func() string { return "b" })
	snap := s.Snapshot()
	stopA()
	s.Add(func() string { return "c" })
	var got []string
	for _, f := range snap {
		got = append(got, f())
	}
	if join(got) != "a b" {
		t.Errorf("snapshot taken before the changes calls %q, want \"a b\"", join(got))
	}
	if n := testing.AllocsPerRun(100, func() { _ = s.Snapshot() }); n != 0 {
		t.Errorf("Snapshot allocates %v times", n)
	}
}
