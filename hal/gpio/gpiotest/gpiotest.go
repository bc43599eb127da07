package gpiotest

import (
	"strconv"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
)

// Pin is a fake GPIO pin. It implements gpio.PinIO and gpio.EdgeWatcher.
//
// The zero value is not usable; call NewPin. Methods are safe for concurrent
// use.
type Pin struct {
	bcm int
	clk clock.Clock

	mu       sync.Mutex
	output   bool
	pull     gpio.Pull
	edge     gpio.Edge
	driven   bool       // something outside drives the line (Set)
	ext      gpio.Level // what it drives
	level    gpio.Level // the line as Read sees it
	outs     []gpio.EdgeEvent
	noRecord bool // SetRecording(false): Out keeps no record
	watchers []*watcher
}

type watcher struct {
	f       func(gpio.EdgeEvent)
	stopped bool
}

// NewPin returns an undriven, floating input with BCM number bcm that reads
// low. clk stamps the levels Out records; nil means a clock that stays at
// clock.Epoch().
func NewPin(bcm int, clk clock.Clock) *Pin {
	if clk == nil {
		clk = clock.NewVirtual(time.Time{})
	}
	return &Pin{bcm: bcm, clk: clk, pull: gpio.Float}
}

// String returns the pin's name.
func (p *Pin) String() string { return p.Name() }

// Name implements gpio.PinIO.
func (p *Pin) Name() string { return "GPIO" + strconv.Itoa(p.bcm) }

// Number implements gpio.PinIO.
func (p *Pin) Number() int { return p.bcm }

// In implements gpio.PinIO. Changing the pull may change the level of an
// undriven line; that change is not reported as an edge, as on a real pin
// edge detection starts with the request that configures it.
func (p *Pin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.output = false
	if pull != gpio.PullNoChange {
		p.pull = pull
	}
	p.edge = edge
	p.level = p.lineLevel()
	return nil
}

// Read implements gpio.PinIO. An output reads back the level it drives.
func (p *Pin) Read() gpio.Level {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.level
}

// Out implements gpio.PinIO. Every call is recorded, see Outs.
func (p *Pin) Out(l gpio.Level) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.output = true
	p.level = l
	if !p.noRecord {
		p.outs = append(p.outs, gpio.EdgeEvent{Level: l, Time: p.clk.Now()})
	}
	return nil
}

// SetRecording turns the record of Out calls (Outs) on, the default, or
// off, for a simulation that runs for hours.
func (p *Pin) SetRecording(on bool) {
	p.mu.Lock()
	p.noRecord = !on
	p.mu.Unlock()
}

// WatchEdges implements gpio.EdgeWatcher. Watchers are called in the order
// they were added.
func (p *Pin) WatchEdges(f func(gpio.EdgeEvent)) (stop func()) {
	w := &watcher{f: f}
	p.mu.Lock()
	p.watchers = append(p.watchers, w)
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if w.stopped {
			return
		}
		w.stopped = true
		for i, x := range p.watchers {
			if x == w {
				p.watchers = append(p.watchers[:i], p.watchers[i+1:]...)
				break
			}
		}
	}
}

// Set drives the line to l from outside, as of time at. If the pin is an
// input and its level changes in a direction selected by In's edge, every
// watcher is called with the event before Set returns. While the pin is an
// output the driven level is remembered and shows when it becomes an input
// again.
func (p *Pin) Set(l gpio.Level, at time.Time) {
	p.mu.Lock()
	p.driven, p.ext = true, l
	p.update(at)
}

// Release stops driving the line from outside, as of time at: an input
// then reads what its pull resistor gives it (a floating input keeps its last
// level). A pressed button wired to ground with a pull-up is Set(gpio.Low);
// letting go of it is Release.
func (p *Pin) Release(at time.Time) {
	p.mu.Lock()
	p.driven = false
	p.update(at)
}

// update recomputes an input's level and reports an edge. p.mu must be held;
// update releases it before calling watchers so that a watcher may use the
// pin.
func (p *Pin) update(at time.Time) {
	if p.output {
		p.mu.Unlock()
		return
	}
	old := p.level
	p.level = p.lineLevel()
	if p.level == old || !p.selected(p.level) {
		p.mu.Unlock()
		return
	}
	ev := gpio.EdgeEvent{Level: p.level, Time: at}
	ws := make([]*watcher, len(p.watchers))
	copy(ws, p.watchers)
	p.mu.Unlock()
	for _, w := range ws {
		w.f(ev)
	}
}

// lineLevel is the level of an input line; p.mu must be held.
func (p *Pin) lineLevel() gpio.Level {
	switch {
	case p.driven:
		return p.ext
	case p.pull == gpio.PullUp:
		return gpio.High
	case p.pull == gpio.PullDown:
		return gpio.Low
	default:
		return p.level
	}
}

// selected reports whether an edge to level l is one In asked for; p.mu must
// be held.
func (p *Pin) selected(l gpio.Level) bool {
	switch p.edge {
	case gpio.BothEdges:
		return true
	case gpio.RisingEdge:
		return l == gpio.High
	case gpio.FallingEdge:
		return l == gpio.Low
	}
	return false
}

// IsOutput reports whether the pin was last set up with Out.
func (p *Pin) IsOutput() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output
}

// Pull returns the pull resistor last set by In (gpio.Float initially).
func (p *Pin) Pull() gpio.Pull {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pull
}

// Edge returns the edge detection last set by In.
func (p *Pin) Edge() gpio.Edge {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.edge
}

// Outs returns every level Out was called with, stamped by the pin's clock,
// oldest first.
func (p *Pin) Outs() []gpio.EdgeEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]gpio.EdgeEvent(nil), p.outs...)
}

var (
	_ gpio.PinIO       = (*Pin)(nil)
	_ gpio.EdgeWatcher = (*Pin)(nil)
)
