package i2ctest

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/internal/conntest"
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
	s := io.Call()
	if io.Err != nil {
		s += " -> " + io.Err.Error()
	}
	return s
}

// Call formats the transaction without its result.
func (io IO) Call() string {
	return fmt.Sprintf("Tx(0x%02x, w %s, r %d byte(s))", io.Addr, conntest.Hex(io.W), len(io.R))
}

// Matches reports whether got addresses the same device, writes the same
// bytes and reads as many.
func (io IO) Matches(got IO) bool {
	return got.Addr == io.Addr && bytes.Equal(got.W, io.W) && len(got.R) == len(io.R)
}

// Record is an i2c.Bus that passes every transaction to Bus and keeps a copy
// of it, failed ones included.
//
// With a nil Bus, Record accepts writes and fails reads; that is enough to
// capture what a driver sends to an output-only chip.
type Record struct {
	Bus i2c.Bus

	rec conntest.Recorder[IO]
}

// Tx implements i2c.Bus.
func (r *Record) Tx(addr uint16, w, rd []byte) error {
	return r.rec.Do(func() (IO, error) {
		io := IO{Addr: addr, W: conntest.Clone(w)}
		var err error
		if r.Bus == nil {
			if len(rd) != 0 {
				err = errors.New("i2ctest: Record with no Bus cannot read")
			}
		} else {
			err = r.Bus.Tx(addr, w, rd)
		}
		io.R, io.Err = conntest.Clone(rd), err
		return io, err
	})
}

// Ops returns the transactions recorded so far, oldest first.
func (r *Record) Ops() []IO { return r.rec.Ops() }

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

	player conntest.Player[IO]
}

// Tx implements i2c.Bus.
func (p *Playback) Tx(addr uint16, w, r []byte) error {
	return p.player.Play(conntest.Names{Pkg: "i2ctest", Noun: "transaction"}, p.Ops, IO{Addr: addr, W: w, R: r}, func(want IO) error {
		copy(r, want.R)
		return want.Err
	})
}

// Count returns how many ops have been played.
func (p *Playback) Count() int { return p.player.Count() }

// Close returns the first mismatch seen, or an error if ops remain unplayed.
func (p *Playback) Close() error {
	return p.player.Close(conntest.Names{Pkg: "i2ctest", Noun: "transaction"}, p.Ops)
}

var (
	_ i2c.Bus = (*Record)(nil)
	_ i2c.Bus = (*Playback)(nil)
)
