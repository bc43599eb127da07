package spitest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/saint-os/saint/hal/spi"
)

// IO is one full-duplex transfer: W clocked out while R was clocked in. Err
// is what the transfer returned; a Playback returns it after copying R.
type IO struct {
	W   []byte
	R   []byte
	Err error
}

// String formats io the way the mismatch errors do.
func (io IO) String() string {
	s := fmt.Sprintf("Tx(w %s, r %d byte(s))", hexBytes(io.W), len(io.R))
	if io.Err != nil {
		s += " -> " + io.Err.Error()
	}
	return s
}

// Record is an spi.Conn that passes every transfer to Conn and keeps a copy
// of it. With a nil Conn it accepts transfers that read nothing.
type Record struct {
	Conn spi.Conn

	mu  sync.Mutex
	ops []IO
}

// Tx implements spi.Conn.
func (r *Record) Tx(w, rd []byte) error {
	io := IO{W: clone(w)}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.Conn == nil {
		if len(rd) != 0 {
			err = errors.New("spitest: Record with no Conn cannot read")
		}
	} else {
		err = r.Conn.Tx(w, rd)
	}
	io.R = clone(rd)
	io.Err = err
	r.ops = append(r.ops, io)
	return err
}

// Ops returns the transfers recorded so far, oldest first.
func (r *Record) Ops() []IO {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]IO(nil), r.ops...)
}

// Playback is an spi.Conn that expects exactly the transfers in Ops, in
// order. Each Tx must match the next op's W and len(R); it then gets R and
// Err. A transfer that does not match returns an error saying what was
// expected and what came, and does not consume the op. Close reports the
// first mismatch, or that the script was not used up.
type Playback struct {
	Ops []IO

	mu    sync.Mutex
	n     int
	first error
}

// Tx implements spi.Conn.
func (p *Playback) Tx(w, r []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := IO{W: w, R: r}
	if p.n >= len(p.Ops) {
		return p.mismatch(fmt.Errorf("spitest: unexpected %s: the script has only %d transfer(s)", got, len(p.Ops)))
	}
	want := p.Ops[p.n]
	if !bytes.Equal(w, want.W) || len(r) != len(want.R) {
		return p.mismatch(fmt.Errorf("spitest: transfer #%d: want %s, got %s", p.n, IO{W: want.W, R: want.R}, got))
	}
	copy(r, want.R)
	p.n++
	return want.Err
}

func (p *Playback) mismatch(err error) error {
	if p.first == nil {
		p.first = err
	}
	return err
}

// Count returns how many ops have been played.
func (p *Playback) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Close returns the first mismatch seen, or an error if ops remain unplayed.
func (p *Playback) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first != nil {
		return p.first
	}
	if p.n != len(p.Ops) {
		return fmt.Errorf("spitest: playback not finished: %d of %d transfer(s) played, next %s", p.n, len(p.Ops), p.Ops[p.n])
	}
	return nil
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

func hexBytes(b []byte) string {
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

var (
	_ spi.Conn = (*Record)(nil)
	_ spi.Conn = (*Playback)(nil)
)
