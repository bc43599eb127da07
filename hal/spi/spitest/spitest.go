package spitest

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/saint-os/saint/hal/internal/conntest"
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
	s := io.Call()
	if io.Err != nil {
		s += " -> " + io.Err.Error()
	}
	return s
}

// Call formats the transfer without its result.
func (io IO) Call() string {
	return fmt.Sprintf("Tx(w %s, r %d byte(s))", conntest.Hex(io.W), len(io.R))
}

// Matches reports whether got clocks out the same bytes and in as many.
func (io IO) Matches(got IO) bool { return bytes.Equal(got.W, io.W) && len(got.R) == len(io.R) }

// Record is an spi.Conn that passes every transfer to Conn and keeps a copy
// of it. With a nil Conn it accepts transfers that read nothing.
type Record struct {
	Conn spi.Conn

	rec conntest.Recorder[IO]
}

// Tx implements spi.Conn.
func (r *Record) Tx(w, rd []byte) error {
	return r.rec.Do(func() (IO, error) {
		var err error
		if r.Conn == nil {
			if len(rd) != 0 {
				err = errors.New("spitest: Record with no Conn cannot read")
			}
		} else {
			err = r.Conn.Tx(w, rd)
		}
		return IO{W: conntest.Clone(w), R: conntest.Clone(rd), Err: err}, err
	})
}

// Ops returns the transfers recorded so far, oldest first.
func (r *Record) Ops() []IO { return r.rec.Ops() }

// Playback is an spi.Conn that expects exactly the transfers in Ops, in
// order. Each Tx must match the next op's W and len(R); it then gets R and
// Err. A transfer that does not match returns an error saying what was
// expected and what came, and does not consume the op. Close reports the
// first mismatch, or that the script was not used up.
type Playback struct {
	Ops []IO

	player conntest.Player[IO]
}

// Tx implements spi.Conn.
func (p *Playback) Tx(w, r []byte) error {
	return p.player.Play(conntest.Names{Pkg: "spitest", Noun: "transfer"}, p.Ops, IO{W: w, R: r}, func(want IO) error {
		copy(r, want.R)
		return want.Err
	})
}

// Count returns how many ops have been played.
func (p *Playback) Count() int { return p.player.Count() }

// Close returns the first mismatch seen, or an error if ops remain unplayed.
func (p *Playback) Close() error {
	return p.player.Close(conntest.Names{Pkg: "spitest", Noun: "transfer"}, p.Ops)
}

var (
	_ spi.Conn = (*Record)(nil)
	_ spi.Conn = (*Playback)(nil)
)
