// Package callbacks is the receiver list every HAL bus keeps: callbacks
// added by Receive, removed by the stop function it returns, and called
// without the list's lock held, so a callback may add or stop receivers
// (its own included) without deadlocking.
package callbacks

import "sync"

// Set is a set of callbacks of type F. The zero value is empty and ready;
// it is safe for concurrent use.
type Set[F any] struct {
	mu   sync.Mutex
	list []*entry[F]
	// fns is the callbacks of list, rebuilt on every change and never
	// modified after: Snapshot hands it out without copying, since a bus
	// delivers far more often than receivers come and go.
	fns []F
}

type entry[F any] struct{ fn F }

// Add adds fn and returns the function that removes it. Stopping twice is
// harmless. A delivery already under way (Snapshot taken) may still call
// fn once.
func (s *Set[F]) Add(fn F) (stop func()) {
	e := &entry[F]{fn: fn}
	s.mu.Lock()
	s.list = append(s.list, e)
	s.rebuild()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.list {
			if x == e {
				s.list = append(s.list[:i:i], s.list[i+1:]...)
				s.rebuild()
				return
			}
		}
	}
}

// rebuild makes a new fns from list; s.mu must be held.
func (s *Set[F]) rebuild() {
	fns := make([]F, len(s.list))
	for i, e := range s.list {
		fns[i] = e.fn
	}
	s.fns = fns
}

// Snapshot returns the callbacks in the order they were added, to be
// called after Snapshot returns. The slice is shared: callers must not
// modify it.
func (s *Set[F]) Snapshot() []F {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fns
}

// Len is the number of callbacks.
func (s *Set[F]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}
