package periph

import (
	"errors"
	"fmt"
	"sync"
	"time"

	pgpio "periph.io/x/conn/v3/gpio"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
)

// edgePoll bounds how long a watch goroutine blocks in WaitForEdge before it
// looks whether it was stopped. periph's Halt is meant to interrupt the
// wait, but a Halt that lands before WaitForEdge arms its deadline is lost,
// so the watch cannot rely on it alone.
const edgePoll = 100 * time.Millisecond

// Pin is a periph GPIO seen as a hal/gpio pin. It implements gpio.PinIO and
// gpio.EdgeWatcher. Methods are safe for concurrent use.
type Pin struct {
	p   pgpio.PinIO
	bcm int
	clk clock.Clock

	mu   sync.Mutex
	edge gpio.Edge // what the last In asked for
}

// NewPin wraps p, which carries BCM GPIO bcm. Edges are stamped with clk;
// nil means clock.Real.
func NewPin(p pgpio.PinIO, bcm int, clk clock.Clock) *Pin {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Pin{p: p, bcm: bcm, clk: clk}
}

// Name implements gpio.PinIO.
func (p *Pin) Name() string { return fmt.Sprintf("GPIO%d", p.bcm) }

// Number implements gpio.PinIO.
func (p *Pin) Number() int { return p.bcm }

func (p *Pin) String() string { return p.Name() }

// In implements gpio.PinIO.
func (p *Pin) In(pull gpio.Pull, edge gpio.Edge) error {
	pp, err := toPeriphPull(pull)
	if err != nil {
		return p.wrap("in", err)
	}
	pe, err := toPeriphEdge(edge)
	if err != nil {
		return p.wrap("in", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.p.In(pp, pe); err != nil {
		return p.wrap("in", err)
	}
	p.edge = edge
	return nil
}

// Read implements gpio.PinIO.
func (p *Pin) Read() gpio.Level { return gpio.Level(p.p.Read()) }

// Out implements gpio.PinIO.
func (p *Pin) Out(l gpio.Level) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.p.Out(pgpio.Level(l)); err != nil {
		return p.wrap("out", err)
	}
	p.edge = gpio.NoEdge
	return nil
}

// WatchEdges implements gpio.EdgeWatcher. The edges reported are those
// selected by the last In; f runs on the watch's own goroutine. stop waits
// for that goroutine to end (at most about 100 ms where the driver cannot
// interrupt a wait), so f is not called after stop returns; stop must not
// be called from f. Watch a pin once at a time: two watches would share
// its edges between them.
func (p *Pin) WatchEdges(f func(gpio.EdgeEvent)) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			default:
			}
			if !p.watching() {
				// Drivers return from WaitForEdge at once on a pin without
				// edge detection; wait for an In that selects edges.
				select {
				case <-done:
					return
				case <-time.After(edgePoll):
				}
				continue
			}
			if !p.p.WaitForEdge(edgePoll) {
				continue
			}
			at := p.clk.Now()
			select {
			case <-done:
				return
			default:
			}
			f(gpio.EdgeEvent{Level: p.levelAfterEdge(), Time: at})
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			// Interrupts a wait in progress where the driver supports it.
			_ = p.p.Halt()
			<-exited
		})
	}
}

// watching reports whether the last In selected edges.
func (p *Pin) watching() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.edge != gpio.NoEdge
}

// levelAfterEdge returns the level an edge left the pin at.
func (p *Pin) levelAfterEdge() gpio.Level {
	p.mu.Lock()
	edge := p.edge
	p.mu.Unlock()
	switch edge {
	case gpio.RisingEdge:
		return gpio.High
	case gpio.FallingEdge:
		return gpio.Low
	}
	return p.Read()
}

func (p *Pin) wrap(op string, err error) error {
	return fmt.Errorf("periph: GPIO%d: %s: %w", p.bcm, op, err)
}

// errUnknown is wrapped by the translation errors below.
var errUnknown = errors.New("value unknown to hal/gpio")

func toPeriphPull(p gpio.Pull) (pgpio.Pull, error) {
	switch p {
	case gpio.PullNoChange:
		return pgpio.PullNoChange, nil
	case gpio.Float:
		return pgpio.Float, nil
	case gpio.PullDown:
		return pgpio.PullDown, nil
	case gpio.PullUp:
		return pgpio.PullUp, nil
	}
	return pgpio.PullNoChange, fmt.Errorf("pull %d: %w (want PullNoChange, Float, PullDown or PullUp)", int(p), errUnknown)
}

func toPeriphEdge(e gpio.Edge) (pgpio.Edge, error) {
	switch e {
	case gpio.NoEdge:
		return pgpio.NoEdge, nil
	case gpio.RisingEdge:
		return pgpio.RisingEdge, nil
	case gpio.FallingEdge:
		return pgpio.FallingEdge, nil
	case gpio.BothEdges:
		return pgpio.BothEdges, nil
	}
	return pgpio.NoEdge, fmt.Errorf("edge %d: %w (want NoEdge, RisingEdge, FallingEdge or BothEdges)", int(e), errUnknown)
}

var (
	_ gpio.PinIO       = (*Pin)(nil)
	_ gpio.EdgeWatcher = (*Pin)(nil)
)
