package uarttest

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/internal/callbacks"
	"github.com/saint-os/saint/hal/internal/conntest"
	"github.com/saint-os/saint/hal/uart"
)

// IO is one exchange on a serial line: W written by the driver, then R
// answered by the device at once (nil: no answer).
type IO struct {
	W []byte
	R []byte
}

// String formats io with its answer.
func (io IO) String() string { return io.Call() + " -> " + conntest.Hex(io.R) }

// Call formats the write alone.
func (io IO) Call() string { return fmt.Sprintf("Write(%s)", conntest.Hex(io.W)) }

// Matches reports whether got writes the same bytes.
func (io IO) Matches(got IO) bool { return bytes.Equal(got.W, io.W) }

// Playback is a uart.Port that expects exactly the writes in Ops, in order,
// after periph's conntest.Playback: each Write must be the next op's W, and
// the op's R then reaches the receivers before Write returns, stamped with
// the zero time. A write that does not match returns an error saying what
// was expected and what came, and does not consume the op; Close reports
// the first mismatch, or that the script was not used up.
//
// Configure accepts any setting a UART could have and Config returns it, so
// a test can check what the driver asked for.
type Playback struct {
	Ops []IO

	player conntest.Player[IO]
	rx     callbacks.Set[func([]byte, time.Time)]
	mu     sync.Mutex
	cfg    uart.Config
}

// Configure implements uart.Port.
func (p *Playback) Configure(c uart.Config) error {
	if c.Baud <= 0 {
		return fmt.Errorf("uarttest: baud %d, want a positive rate", c.Baud)
	}
	p.mu.Lock()
	p.cfg = c
	p.mu.Unlock()
	return nil
}

// Config returns the last configuration set.
func (p *Playback) Config() uart.Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Write implements uart.Port.
func (p *Playback) Write(b []byte) (int, error) {
	var reply []byte
	if err := p.player.Play(conntest.Names{Pkg: "uarttest", Noun: "write"}, p.Ops, IO{W: b}, func(want IO) error {
		reply = want.R
		return nil
	}); err != nil {
		return 0, err
	}
	if len(reply) > 0 {
		for _, fn := range p.rx.Snapshot() {
			fn(append([]byte(nil), reply...), time.Time{})
		}
	}
	return len(b), nil
}

// Receive implements uart.Port.
func (p *Playback) Receive(fn func(b []byte, at time.Time)) (stop func()) { return p.rx.Add(fn) }

// Count returns how many ops have been played.
func (p *Playback) Count() int { return p.player.Count() }

// Close returns the first mismatch seen, or an error if ops remain unplayed.
func (p *Playback) Close() error {
	return p.player.Close(conntest.Names{Pkg: "uarttest", Noun: "write"}, p.Ops)
}

var _ uart.Port = (*Playback)(nil)
