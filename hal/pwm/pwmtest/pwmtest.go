package pwmtest

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/pwm"
)

// Setting is the output of a PWM pin from Time on.
type Setting struct {
	Duty   float64 // 0–1; 0 when halted
	FreqHz float64 // the last frequency set, kept across Halt
	On     bool    // false after Halt
	Time   time.Time
}

// Pulse returns the high time of one period: 1.5 ms for a centred servo at
// 50 Hz. It is zero when the output is off.
func (s Setting) Pulse() time.Duration {
	if !s.On || s.FreqHz <= 0 {
		return 0
	}
	return time.Duration(math.Round(s.Duty / s.FreqHz * float64(time.Second)))
}

// Pin is a fake PWM output. It implements pwm.Pin.
//
// The zero value is not usable; call NewPin. Methods are safe for concurrent
// use.
type Pin struct {
	clk clock.Clock

	mu       sync.Mutex
	cur      Setting
	log      []Setting
	noRecord bool // SetRecording(false): PWM and Halt keep no history
	fail     error
}

// NewPin returns a halted pin. clk stamps each Setting; nil means a clock
// that stays at clock.Epoch().
func NewPin(clk clock.Clock) *Pin {
	if clk == nil {
		clk = clock.NewVirtual(time.Time{})
	}
	return &Pin{clk: clk, cur: Setting{Time: clk.Now()}}
}

// PWM implements pwm.Pin. A duty outside 0–1 or a frequency that is not
// positive and finite is an error, and changes nothing.
func (p *Pin) PWM(duty, freqHz float64) error {
	if !(duty >= 0 && duty <= 1) {
		return fmt.Errorf("pwmtest: duty %v outside 0–1", duty)
	}
	if !(freqHz > 0) || math.IsInf(freqHz, 1) {
		return fmt.Errorf("pwmtest: frequency %v Hz is not positive", freqHz)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.set(Setting{Duty: duty, FreqHz: freqHz, On: true})
	return nil
}

// Halt implements pwm.Pin.
func (p *Pin) Halt() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.set(Setting{FreqHz: p.cur.FreqHz})
	return nil
}

// set records s; p.mu must be held.
func (p *Pin) set(s Setting) {
	s.Time = p.clk.Now()
	p.cur = s
	if !p.noRecord {
		p.log = append(p.log, s)
	}
}

// SetRecording turns the History record on, the default, or off. A
// simulation that runs for hours turns it off: a motor driver sets its
// duty many times a second.
func (p *Pin) SetRecording(on bool) {
	p.mu.Lock()
	p.noRecord = !on
	p.mu.Unlock()
}

// State returns the current output.
func (p *Pin) State() Setting {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// History returns every successful PWM and Halt call, oldest first.
func (p *Pin) History() []Setting {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Setting(nil), p.log...)
}

// Fail makes PWM and Halt return err, without changing the output, until
// Fail(nil): a driver test's way to see what happens when the hardware
// refuses.
func (p *Pin) Fail(err error) {
	p.mu.Lock()
	p.fail = err
	p.mu.Unlock()
}

// ErrFake is a ready-made error for Fail.
var ErrFake = errors.New("pwmtest: injected failure")

var _ pwm.Pin = (*Pin)(nil)
