package serial

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bugserial "go.bug.st/serial"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/internal/callbacks"
	"github.com/saint-os/saint/hal/uart"
)

// Options configures a Port. Nil means defaults.
type Options struct {
	// Config is the line setting Open applies; the zero Config means
	// 115200 8N1.
	Config uart.Config
	// Clock stamps received bytes; nil means clock.Real.
	Clock clock.Clock
	// HardwareInverter says an inverter is fitted between the device and
	// the UART, so Configure accepts Inverted lines (SBUS).
	HardwareInverter bool
}

// ErrInverted is wrapped by Configure's error for an inverted line on a
// port without a hardware inverter.
var ErrInverted = errors.New("inverted signalling is not a Linux serial option on a Raspberry Pi (neither the PL011 nor the mini UART inverts in software); fit a hardware inverter (74HC14, or an NPN transistor) between the device and RX and set the port's HardwareInverter")

// Port is a serial device. It implements uart.Port. Methods are safe for
// concurrent use.
type Port struct {
	name     string
	p        bugserial.Port
	clk      clock.Clock
	inverter bool

	mu      sync.Mutex
	rx      callbacks.Set[func([]byte, time.Time)]
	readErr error
	closed  bool
	done    chan struct{} // closed when the reader goroutine ends
}

// Open opens the serial device name ("/dev/serial0") with o.Config and
// starts its reader.
func Open(name string, o *Options) (*Port, error) {
	if o == nil {
		o = &Options{}
	}
	c := o.Config
	if c.Baud == 0 {
		c.Baud = 115200
	}
	mode, err := toMode(c, o.HardwareInverter)
	if err != nil {
		return nil, fmt.Errorf("serial: %s: %w", name, err)
	}
	p, err := bugserial.Open(name, mode)
	if err != nil {
		return nil, fmt.Errorf("serial: %s: %w", name, err)
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	port := &Port{name: name, p: p, clk: clk, inverter: o.HardwareInverter, done: make(chan struct{})}
	go port.read()
	return port, nil
}

// read delivers received bytes until the port closes or fails.
func (p *Port) read() {
	defer close(p.done)
	buf := make([]byte, 512)
	for {
		n, err := p.p.Read(buf)
		if n > 0 {
			at := p.clk.Now()
			got := append([]byte(nil), buf[:n]...)
			for _, fn := range p.rx.Snapshot() {
				fn(got, at)
			}
		}
		if err != nil {
			p.mu.Lock()
			if !p.closed {
				p.readErr = err
			}
			p.mu.Unlock()
			return
		}
	}
}

// Name returns the device name.
func (p *Port) Name() string { return p.name }

// Configure implements uart.Port.
func (p *Port) Configure(c uart.Config) error {
	mode, err := toMode(c, p.inverter)
	if err != nil {
		return fmt.Errorf("serial: %s: %w", p.name, err)
	}
	if err := p.p.SetMode(mode); err != nil {
		return fmt.Errorf("serial: %s: %w", p.name, err)
	}
	return nil
}

// Write implements uart.Port.
func (p *Port) Write(b []byte) (int, error) {
	n, err := p.p.Write(b)
	if err != nil {
		return n, fmt.Errorf("serial: %s: %w", p.name, err)
	}
	return n, nil
}

// Receive implements uart.Port. fn runs on the port's reader goroutine and
// must not modify p, which every receiver of that read shares.
func (p *Port) Receive(fn func(b []byte, at time.Time)) (stop func()) {
	return p.rx.Add(fn)
}

// Err returns why the reader stopped before Close (the device went away),
// or nil while it runs.
func (p *Port) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readErr
}

// Close closes the device and waits for the reader goroutine to end.
func (p *Port) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.p.Close()
	<-p.done
	return err
}

// toMode translates a HAL line setting to the library's, refusing what a
// Pi's UART cannot do.
func toMode(c uart.Config, inverter bool) (*bugserial.Mode, error) {
	if c.Baud <= 0 {
		return nil, fmt.Errorf("baud rate %d, want > 0", c.Baud)
	}
	m := &bugserial.Mode{BaudRate: c.Baud, DataBits: c.DataBits}
	if m.DataBits == 0 {
		m.DataBits = 8
	}
	if m.DataBits < 5 || m.DataBits > 8 {
		return nil, fmt.Errorf("data bits %d, want 5–8", c.DataBits)
	}
	switch c.Parity {
	case uart.NoParity:
		m.Parity = bugserial.NoParity
	case uart.EvenParity:
		m.Parity = bugserial.EvenParity
	case uart.OddParity:
		m.Parity = bugserial.OddParity
	default:
		return nil, fmt.Errorf("parity %d, want NoParity, EvenParity or OddParity", int(c.Parity))
	}
	switch c.StopBits {
	case 0, 1:
		m.StopBits = bugserial.OneStopBit
	case 2:
		m.StopBits = bugserial.TwoStopBits
	default:
		return nil, fmt.Errorf("stop bits %d, want 1 or 2", c.StopBits)
	}
	if c.Inverted && !inverter {
		return nil, ErrInverted
	}
	return m, nil
}

var _ uart.Port = (*Port)(nil)
