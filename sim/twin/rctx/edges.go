package rctx

import (
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
)

// PPMOptions configures a PPM output. Nil or zero fields mean defaults.
type PPMOptions struct {
	// Channels is how many channels the frame carries; 0 means 8.
	Channels int
	// Signal is the frame period, pulse width and polarity; zero fields
	// mean rc's defaults (22.5 ms, 400 µs, positive).
	Signal rc.PPMOptions
}

// PPM is a receiver with a PPM sum output on one line. Its Sticks' methods
// are safe for concurrent use.
type PPM struct {
	Sticks

	ex     *executor.Executor
	line   Line
	sig    rc.PPMOptions
	idle   gpio.Level
	period time.Duration
	timer  *executor.Timer
	edges  edgeQueue

	mu     sync.Mutex
	frames uint64
	closed bool
}

// NewPPM drives line to its idle level now and starts sending frames on it,
// the first one period from now. Close stops it.
func NewPPM(ex *executor.Executor, line Line, o *PPMOptions) (*PPM, error) {
	var opt PPMOptions
	if o != nil {
		opt = *o
	}
	n := cmp.Or(opt.Channels, 8)
	if n < rc.PPMMinChannels || n > rc.MaxChannels {
		return nil, fmt.Errorf("rctx: PPM channels %d, want %d to %d", n, rc.PPMMinChannels, rc.MaxChannels)
	}
	if opt.Signal.Period < 0 || opt.Signal.Pulse < 0 {
		return nil, fmt.Errorf("rctx: PPM period %v and pulse %v, want neither negative", opt.Signal.Period, opt.Signal.Pulse)
	}
	p := &PPM{
		ex:     ex,
		line:   line,
		sig:    opt.Signal,
		idle:   gpio.Low,
		period: cmp.Or(opt.Signal.Period, rc.PPMPeriod),
		edges:  edgeQueue{ex: ex},
	}
	p.init(n)
	if opt.Signal.Inverted {
		p.idle = gpio.High
	}
	line.Set(p.idle, ex.Now())
	p.timer = ex.After(p.period, p.frame)
	return p, nil
}

// Close stops sending; the line is left idle. It may be called from any
// goroutine: the pulse in flight is cut on the executor.
func (p *PPM) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.timer.Stop()
	p.ex.Post(func() {
		p.edges.stop()
		p.line.Set(p.idle, p.ex.Now())
	})
}

// Frames returns how many frames were sent.
func (p *PPM) Frames() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frames
}

// frame sends one frame and arms the next: a full frame stretches the
// period to leave room for the sync.
func (p *PPM) frame() {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return
	}
	now := p.ex.Now()
	us, up := p.snapshot()
	next := now.Add(p.period)
	if up {
		var evs []gpio.EdgeEvent
		evs, next = rc.PPMEdges(now, us[:p.n], &p.sig)
		q := make([]edge, len(evs))
		for i, e := range evs {
			q[i] = edge{at: e.Time, line: p.line, level: e.Level}
		}
		p.mu.Lock()
		p.frames++
		p.mu.Unlock()
		p.edges.add(q...)
	}
	p.timer.Reset(next.Sub(now))
}

// PWMOptions configures a PWM output. Nil or zero fields mean defaults.
type PWMOptions struct {
	// Period is the servo frame period; 0 means rc.PWMPeriod (50 Hz).
	Period time.Duration
}

// PWM is a receiver with one servo output per channel, each on its own
// line. Every channel's pulse starts at the frame start, as on receivers
// that update all outputs together. Its Sticks' methods are safe for
// concurrent use.
type PWM struct {
	Sticks

	ex     *executor.Executor
	lines  []Line
	period time.Duration
	timer  *executor.Timer
	edges  edgeQueue

	mu     sync.Mutex
	frames uint64
	closed bool
}

// NewPWM drives every line low now and starts sending pulses on them, the
// first frame one period from now. There is one channel per line (1 to 16).
// Close stops it.
func NewPWM(ex *executor.Executor, lines []Line, o *PWMOptions) (*PWM, error) {
	if len(lines) < 1 || len(lines) > rc.MaxChannels {
		return nil, fmt.Errorf("rctx: %d PWM lines, want 1 to %d", len(lines), rc.MaxChannels)
	}
	var opt PWMOptions
	if o != nil {
		opt = *o
	}
	period := cmp.Or(opt.Period, rc.PWMPeriod)
	if period <= MaxMicros*time.Microsecond {
		return nil, fmt.Errorf("rctx: PWM period %v, want more than the longest pulse (%d µs)", period, MaxMicros)
	}
	p := &PWM{
		ex:     ex,
		lines:  append([]Line(nil), lines...),
		period: period,
		edges:  edgeQueue{ex: ex},
	}
	p.init(len(lines))
	for _, l := range p.lines {
		l.Set(gpio.Low, ex.Now())
	}
	p.timer = ex.Every(period, p.frame)
	return p, nil
}

// Close stops sending; the lines are left low. It may be called from any
// goroutine: the pulses in flight are cut on the executor.
func (p *PWM) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.timer.Stop()
	p.ex.Post(func() {
		p.edges.stop()
		for _, l := range p.lines {
			l.Set(gpio.Low, p.ex.Now())
		}
	})
}

// Frames returns how many frames were sent.
func (p *PWM) Frames() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frames
}

func (p *PWM) frame() {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	us, up := p.snapshot()
	if closed || !up {
		return
	}
	now := p.ex.Now()
	q := make([]edge, 0, 2*len(p.lines))
	for i, l := range p.lines {
		for _, e := range rc.PWMPulse(now, us[i]) {
			q = append(q, edge{at: e.Time, line: l, level: e.Level})
		}
	}
	p.mu.Lock()
	p.frames++
	p.mu.Unlock()
	p.edges.add(q...)
}
