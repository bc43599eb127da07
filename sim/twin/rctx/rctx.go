package rctx

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
)

// Stick positions (µs) a transmitter sends.
const (
	Low    = 1000
	Center = 1500
	High   = 2000

	// MinMicros and MaxMicros bound what Set accepts: beyond the 1000–2000
	// nominal range, as a transmitter with extended limits sends. SBUS and
	// CRSF carry 880–2159 µs and clamp what lies beyond.
	MinMicros = 800
	MaxMicros = 2200
)

// Sticks are the transmitter's channel positions and the state of its link.
// They start centred with the link up. Methods are safe for concurrent use.
type Sticks struct {
	mu       sync.Mutex
	n        int
	us       [rc.MaxChannels]uint16
	linkLost bool
}

// init centres n channels.
func (s *Sticks) init(n int) {
	s.n = n
	for i := range s.us {
		s.us[i] = Center
	}
}

// Channels returns how many channels the transmitter sends.
func (s *Sticks) Channels() int { return s.n }

// Set puts channel ch (1 is the first) at us µs.
func (s *Sticks) Set(ch int, us uint16) error {
	if ch < 1 || ch > s.n {
		return fmt.Errorf("rctx: channel %d, want 1 to %d", ch, s.n)
	}
	if us < MinMicros || us > MaxMicros {
		return fmt.Errorf("rctx: channel %d position %d µs, want %d to %d", ch, us, MinMicros, MaxMicros)
	}
	s.mu.Lock()
	s.us[ch-1] = us
	s.mu.Unlock()
	return nil
}

// SetAll sets channels 1 to len(us).
func (s *Sticks) SetAll(us ...uint16) error {
	if len(us) > s.n {
		return fmt.Errorf("rctx: %d positions for %d channels", len(us), s.n)
	}
	for i, v := range us {
		if err := s.Set(i+1, v); err != nil {
			return err
		}
	}
	return nil
}

// SetNormalized puts a stick at v, −1 (1000 µs) to 1 (2000 µs) through 0
// (1500 µs); v outside that range is clamped, as the stick's travel is.
func (s *Sticks) SetNormalized(ch int, v float64) error {
	if math.IsNaN(v) {
		return fmt.Errorf("rctx: channel %d position is NaN", ch)
	}
	v = max(-1, min(1, v))
	return s.Set(ch, uint16(math.Round(Center+500*v)))
}

// SetSwitch puts a two-position switch on channel ch low (1000 µs) or high
// (2000 µs).
func (s *Sticks) SetSwitch(ch int, on bool) error {
	if on {
		return s.Set(ch, High)
	}
	return s.Set(ch, Low)
}

// Get returns channel ch's position in µs, 0 for a channel not sent.
func (s *Sticks) Get(ch int) uint16 {
	if ch < 1 || ch > s.n {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.us[ch-1]
}

// SetLinkLost cuts (true) or restores (false) the radio link: while it is
// lost the receiver sends nothing, as a receiver without a failsafe output
// does (an SBUS Serial with SBUSFailsafeAfter sends its flags instead).
func (s *Sticks) SetLinkLost(lost bool) {
	s.mu.Lock()
	s.linkLost = lost
	s.mu.Unlock()
}

// LinkLost reports whether the link is cut.
func (s *Sticks) LinkLost() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.linkLost
}

// snapshot returns the positions and whether the link is up.
func (s *Sticks) snapshot() (us [rc.MaxChannels]uint16, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.us, !s.linkLost
}

// Line is a GPIO line the receiver drives from outside the board. A
// gpiotest.Pin is one; BoardLine adapts a simulated board.
type Line interface {
	// Set drives the line to l as of at.
	Set(l gpio.Level, at time.Time)
}

// InputSetter is a board whose GPIO inputs can be driven from outside, as
// sim/board's Board is.
type InputSetter interface {
	SetInput(bcm int, l gpio.Level) error
	SetInputAt(bcm int, l gpio.Level, at time.Time) error
}

// BoardLine returns the line to GPIO bcm of b; each edge keeps the time the
// transmitter gave it. It drives the line low to check that the pin can be
// driven.
func BoardLine(b InputSetter, bcm int) (Line, error) {
	if err := b.SetInput(bcm, gpio.Low); err != nil {
		return nil, fmt.Errorf("rctx: GPIO%d: %w", bcm, err)
	}
	return boardLine{b: b, bcm: bcm}, nil
}

type boardLine struct {
	b   InputSetter
	bcm int
}

// Set implements Line. The pin was checked by BoardLine, so SetInputAt has
// nothing left to refuse.
func (l boardLine) Set(lv gpio.Level, at time.Time) { _ = l.b.SetInputAt(l.bcm, lv, at) }

// edge is an edge due on a line.
type edge struct {
	at    time.Time
	line  Line
	level gpio.Level
}

// edgeQueue drives edges on their lines at their times, with one executor
// timer armed for the earliest. It is used only from executor callbacks.
type edgeQueue struct {
	ex    *executor.Executor
	timer *executor.Timer
	q     []edge
}

// add queues edges and drives those already due.
func (e *edgeQueue) add(edges ...edge) {
	e.q = append(e.q, edges...)
	sort.SliceStable(e.q, func(i, j int) bool { return e.q[i].at.Before(e.q[j].at) })
	e.run()
}

// run drives the edges due now and arms the timer for the next.
func (e *edgeQueue) run() {
	now := e.ex.Now()
	i := 0
	for ; i < len(e.q) && !e.q[i].at.After(now); i++ {
		e.q[i].line.Set(e.q[i].level, e.q[i].at)
	}
	e.q = append(e.q[:0], e.q[i:]...)
	if len(e.q) == 0 {
		return
	}
	d := e.q[0].at.Sub(now)
	if e.timer == nil {
		e.timer = e.ex.After(d, e.run)
	} else {
		e.timer.Reset(d)
	}
}

// stop forgets pending edges.
func (e *edgeQueue) stop() {
	if e.timer != nil {
		e.timer.Stop()
	}
	e.q = nil
}
