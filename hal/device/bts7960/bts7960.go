package bts7960

import (
	"errors"
	"fmt"
	"math"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/pwm"
)

// DefaultFreqHz is the PWM frequency: above hearing and within the
// BTS7960's 25 kHz limit.
const DefaultFreqHz = 20000

// Pins are the module's inputs.
type Pins struct {
	RPWM, LPWM pwm.Pin
	REN        gpio.PinIO
	LEN        gpio.PinIO // nil when tied to REN
}

// Options configures a Bridge; nil means the defaults.
type Options struct {
	// FreqHz is the PWM frequency; 0 means DefaultFreqHz.
	FreqHz float64
}

// ErrDisabled is returned when driving a bridge after Disable.
var ErrDisabled = errors.New("bts7960: bridge disabled")

// Bridge is one BTS7960 module. It is not safe for concurrent use; call it
// from one goroutine (the executor).
type Bridge struct {
	p        Pins
	freq     float64
	enabled  bool // enable pins high
	disabled bool // latched by Disable
	duty     float64
}

// New returns a bridge on p, brought to a safe state: inputs low, enables
// low (coasting).
func New(p Pins, o *Options) (*Bridge, error) {
	if p.RPWM == nil || p.LPWM == nil || p.REN == nil {
		return nil, errors.New("bts7960: RPWM, LPWM and R_EN are required")
	}
	b := &Bridge{p: p, freq: DefaultFreqHz}
	if o != nil && o.FreqHz != 0 {
		if !(o.FreqHz > 0) || math.IsInf(o.FreqHz, 0) {
			return nil, fmt.Errorf("bts7960: PWM frequency %v Hz is not positive", o.FreqHz)
		}
		b.freq = o.FreqHz
	}
	if err := b.Coast(); err != nil {
		return nil, err
	}
	return b, nil
}

// Duty returns the last duty set: −1…1, 0 when braking or coasting.
func (b *Bridge) Duty() float64 { return b.duty }

func (b *Bridge) enable(on bool) error {
	l := gpio.Level(on)
	if err := b.p.REN.Out(l); err != nil {
		return fmt.Errorf("bts7960: R_EN: %w", err)
	}
	if b.p.LEN != nil {
		if err := b.p.LEN.Out(l); err != nil {
			return fmt.Errorf("bts7960: L_EN: %w", err)
		}
	}
	b.enabled = on
	return nil
}

// inputs sets RPWM to r and LPWM to l (duties 0–1); the input going low is
// set first so that both are never high together.
func (b *Bridge) inputs(r, l float64) error {
	set := func(name string, p pwm.Pin, d float64) error {
		var err error
		if d == 0 {
			err = p.Halt()
		} else {
			err = p.PWM(d, b.freq)
		}
		if err != nil {
			return fmt.Errorf("bts7960: %s: %w", name, err)
		}
		return nil
	}
	if r == 0 {
		if err := set("RPWM", b.p.RPWM, 0); err != nil {
			return err
		}
		return set("LPWM", b.p.LPWM, l)
	}
	if err := set("LPWM", b.p.LPWM, 0); err != nil {
		return err
	}
	return set("RPWM", b.p.RPWM, r)
}

// SetDuty drives the motor at duty, −1…1 of the supply: positive on RPWM,
// negative on LPWM, 0 brakes.
func (b *Bridge) SetDuty(duty float64) error {
	if math.IsNaN(duty) || duty < -1 || duty > 1 {
		return fmt.Errorf("bts7960: duty %v outside −1…1", duty)
	}
	if b.disabled {
		return ErrDisabled
	}
	r, l := max(duty, 0), max(-duty, 0)
	if err := b.inputs(r, l); err != nil {
		return err
	}
	b.duty = duty
	if !b.enabled {
		return b.enable(true)
	}
	return nil
}

// Brake shorts the motor through both low sides.
func (b *Bridge) Brake() error { return b.SetDuty(0) }

// Coast lets the motor turn freely: both half-bridges off.
func (b *Bridge) Coast() error {
	b.duty = 0
	if err := b.enable(false); err != nil {
		return err
	}
	return b.inputs(0, 0)
}

// Disable coasts and refuses SetDuty and Brake until Enable.
func (b *Bridge) Disable() error {
	b.disabled = true
	return b.Coast()
}

// Enable lifts Disable. The bridge stays coasting until told to drive.
func (b *Bridge) Enable() { b.disabled = false }
