package conntest

import (
	"fmt"
	"strings"
	"sync"
)

// Op is one scripted operation: how errors show it (String, with its
// answer; Call, the call alone), and whether a call the driver made (got)
// is this operation.
type Op[T any] interface {
	fmt.Stringer
	Call() string
	Matches(got T) bool
}

// Names name a fake and its operations in errors: {"i2ctest",
// "transaction"}.
type Names struct{ Pkg, Noun string }

// Player plays a script of operations in order. The zero value starts at
// the first operation. It is safe for concurrent use.
type Player[T Op[T]] struct {
	mu    sync.Mutex
	n     int
	first error
}

// Play matches got against the next operation of ops. On a match it moves
// on and returns play(want), which hands the operation's answer to the
// caller; otherwise it returns an error saying what was expected and what
// came, and stays where it is.
func (p *Player[T]) Play(names Names, ops []T, got T, play func(want T) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n >= len(ops) {
		return p.mismatch(fmt.Errorf("%s: unexpected %s: the script has only %d %s(s)", names.Pkg, got.Call(), len(ops), names.Noun))
	}
	want := ops[p.n]
	if !want.Matches(got) {
		return p.mismatch(fmt.Errorf("%s: %s #%d: want %s, got %s", names.Pkg, names.Noun, p.n, want.Call(), got.Call()))
	}
	p.n++
	return play(want)
}

func (p *Player[T]) mismatch(err error) error {
	if p.first == nil {
		p.first = err
	}
	return err
}

// Count returns how many operations have been played.
func (p *Player[T]) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Close returns the first mismatch seen, or an error if operations of ops
// remain unplayed.
func (p *Player[T]) Close(names Names, ops []T) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first != nil {
		return p.first
	}
	if p.n != len(ops) {
		return fmt.Errorf("%s: playback not finished: %d of %d %s(s) played, next %s", names.Pkg, p.n, len(ops), names.Noun, ops[p.n])
	}
	return nil
}

// Recorder keeps the operations that went over a connection. It is safe
// for concurrent use.
type Recorder[T any] struct {
	mu  sync.Mutex
	ops []T
}

// Do runs call, one at a time, and records the operation it returns.
func (r *Recorder[T]) Do(call func() (T, error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	op, err := call()
	r.ops = append(r.ops, op)
	return err
}

// Ops returns the operations recorded so far, oldest first.
func (r *Recorder[T]) Ops() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.ops...)
}

// Clone copies b, nil when it is empty.
func Clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// Hex formats b as [0x75 0x00].
func Hex(b []byte) string {
	var s strings.Builder
	s.WriteByte('[')
	for i, c := range b {
		if i > 0 {
			s.WriteByte(' ')
		}
		fmt.Fprintf(&s, "0x%02x", c)
	}
	s.WriteByte(']')
	return s.String()
}
