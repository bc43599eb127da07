package i2ctest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/saint-os/saint/hal/i2c"
)

// IO is one transaction on an I²C bus: W written to the device at Addr, then
// R read back. Err is what the transaction returned; a Playback returns it
// after copying R, so a script can make a chip fail on cue.
type IO struct {
	Addr uint16
	W    []byte
	R    []byte
	Err  error
}

// String formats io the way the mismatch errors do.
func (io IO) String() string {
	s := fmt.Sprintf("Tx(0x%02x, w %s, r %d byte(s))", io.Addr, hexBytes(io.W), len(io.R))
	if io.Err != nil {
		s += " -> " + io.Err.Error()
	}
	return s
}

// Record is an i2c.Bus that passes every transaction to Bus and keeps a copy
// of it, failed ones included.
//
// With a nil Bus, Record accepts writes and fails reads; that is enough to
// capture what a driver sends to an output-only chip.
type Record struct {
	Bus i2c.Bus

	mu  sync.Mutex
	ops []IO
}

// Tx implements i2c.Bus.
func (r *Record) Tx(addr uint16, w, rd []byte) error {
	io := IO{Addr: addr, W: clone(w)}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.Bus == nil {
		if len(rd) != 0 {
			err = errors.New("i2ctest: Record with no Bus cannot read")
		}
	} else {
		err = r.Bus.Tx(addr, w, rd)
	}
	if len(rd) != 0 {
		io.R = clone(rd)
	}
	io.Err = err
	r.ops = append(r.ops, io)
	return err
}

// Ops returns the transactions recorded so far, oldest first.
func (r *Record) Ops() []IO {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]IO(nil), r.ops...)
}

// Playback is an i2c.Bus that expects exactly the transactions in Ops, in
// order. Each Tx must match the next op's Addr, W and len(R); it then gets R
// and Err. A transaction that does not match returns an error saying what
// was expected and what came, and does not consume the op.
//
// Close reports the first mismatch, or that the script was not used up, so a
// test that ends with
//
//	if err := p.Close(); err != nil { t.Fatal(err) }
//
// catches a driver that swallowed an error or stopped early.
type Playback struct {
	Ops []IO

	mu    sync.Mutex
	n     int
	first error
}

// Tx implements i2c.Bus.
func (p *Playback) Tx(addr uint16, w, r []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := IO{Addr: addr, W: w, R: r}
	if p.n >= len(p.Ops) {
		return p.mismatch(fmt.Errorf("i2ctest: unexpected %s: the script has only %d transaction(s)", got, len(p.Ops)))
	}
	want := p.Ops[p.n]
	if addr != want.Addr || !bytes.Equal(w, want.W) || len(r) != len(want.R) {
		return p.mismatch(fmt.Errorf("i2ctest: transaction #%d: want %s, got %s", p.n, IO{Addr: want.Addr, W: want.W, R: want.R}, got))
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
		return fmt.Errorf("i2ctest: playback not finished: %d of %d transaction(s) played, next %s", p.n, len(p.Ops), p.Ops[p.n])
	}
	return nil
}

func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// hexBytes formats b as [0x75 0x00].
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
	_ i2c.Bus = (*Record)(nil)
	_ i2c.Bus = (*Playback)(nil)
)
