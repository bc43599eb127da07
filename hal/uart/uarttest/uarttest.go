package uarttest

import (
	"fmt"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/internal/callbacks"
	"github.com/saint-os/saint/hal/uart"
)

// Chunk is the bytes of one Write or Inject and when they were sent.
type Chunk struct {
	Data []byte
	Time time.Time
}

// Port is a fake UART. It implements uart.Port.
//
// Received bytes go to the receivers registered at the time they arrive,
// synchronously, in the order the receivers subscribed; bytes that arrive
// while nobody listens are dropped, as a decoder started late would never
// have seen them.
//
// The zero value is not usable; call NewPort or Pipe. Methods are safe for
// concurrent use.
type Port struct {
	clk clock.Clock

	mu       sync.Mutex
	cfg      uart.Config
	writes   []Chunk
	noRecord bool
	rx       callbacks.Set[func([]byte, time.Time)]
	peer     *Port
}

// NewPort returns an unconnected port: writes are only recorded. clk stamps
// writes; nil means a clock that stays at clock.Epoch().
func NewPort(clk clock.Clock) *Port {
	if clk == nil {
		clk = clock.NewVirtual(time.Time{})
	}
	return &Port{clk: clk}
}

// Pipe returns two ports connected TX to RX: what one writes, the other
// receives, stamped with clk's time of the write. The line is ideal (no
// transmission delay, no baud mismatch garbling); model those in a twin if a
// test needs them.
func Pipe(clk clock.Clock) (a, b *Port) {
	a, b = NewPort(clk), NewPort(clk)
	b.clk = a.clk
	a.peer, b.peer = b, a
	return a, b
}

// Configure implements uart.Port. Settings no UART supports are an error.
func (p *Port) Configure(c uart.Config) error {
	if c.Baud <= 0 {
		return fmt.Errorf("uarttest: baud %d is not positive", c.Baud)
	}
	if c.DataBits != 0 && (c.DataBits < 5 || c.DataBits > 8) {
		return fmt.Errorf("uarttest: %d data bits", c.DataBits)
	}
	if c.StopBits < 0 || c.StopBits > 2 {
		return fmt.Errorf("uarttest: %d stop bits", c.StopBits)
	}
	if c.Parity < uart.NoParity || c.Parity > uart.OddParity {
		return fmt.Errorf("uarttest: unknown parity %d", c.Parity)
	}
	p.mu.Lock()
	p.cfg = c
	p.mu.Unlock()
	return nil
}

// Config returns the settings last applied with Configure.
func (p *Port) Config() uart.Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Write implements uart.Port. The bytes are recorded (unless
// SetRecording(false)) and, on a Pipe, received by the other end before
// Write returns.
func (p *Port) Write(b []byte) (int, error) {
	now := p.clk.Now()
	p.mu.Lock()
	if !p.noRecord {
		p.writes = append(p.writes, Chunk{Data: append([]byte(nil), b...), Time: now})
	}
	peer := p.peer
	p.mu.Unlock()
	if peer != nil && len(b) > 0 {
		// Inject gives each receiver its own copy.
		peer.Inject(b, now)
	}
	return len(b), nil
}

// SetRecording turns the record of writes (Writes, Written) on, the
// default, or off. A simulation that runs for hours turns it off: the
// record keeps every byte ever written.
func (p *Port) SetRecording(on bool) {
	p.mu.Lock()
	p.noRecord = !on
	p.mu.Unlock()
}

// Inject delivers b to the port's receivers as bytes arriving at at.
func (p *Port) Inject(b []byte, at time.Time) {
	if len(b) == 0 {
		return
	}
	for _, fn := range p.rx.Snapshot() {
		// Each receiver gets its own copy: a decoder may keep the slice.
		fn(append([]byte(nil), b...), at)
	}
}

// Receive implements uart.Port.
func (p *Port) Receive(fn func(b []byte, at time.Time)) (stop func()) {
	return p.rx.Add(fn)
}

// Writes returns every Write, oldest first.
func (p *Port) Writes() []Chunk {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Chunk(nil), p.writes...)
}

// Written returns all bytes written, concatenated.
func (p *Port) Written() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b []byte
	for _, c := range p.writes {
		b = append(b, c.Data...)
	}
	return b
}

var _ uart.Port = (*Port)(nil)
