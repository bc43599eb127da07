package periph

import (
	"fmt"
	"math"

	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"

	"github.com/saint-os/saint/hal/pwm"
)

// PWM is a periph output that can run PWM (a bcm283x hardware PWM channel
// on a Pi, gpiotest.Pin in tests) seen as a hal/pwm pin. It implements
// pwm.Pin.
type PWM struct {
	p   pgpio.PinIO
	bcm int
}

// NewPWM wraps p, which carries BCM GPIO bcm.
func NewPWM(p pgpio.PinIO, bcm int) *PWM { return &PWM{p: p, bcm: bcm} }

func (w *PWM) String() string { return fmt.Sprintf("GPIO%d", w.bcm) }

// PWM implements pwm.Pin. duty is rounded to periph's 24-bit resolution;
// freqHz to a micro-hertz.
func (w *PWM) PWM(duty, freqHz float64) error {
	if math.IsNaN(duty) || duty < 0 || duty > 1 {
		return fmt.Errorf("periph: GPIO%d: pwm: duty %v, want 0–1", w.bcm, duty)
	}
	if math.IsNaN(freqHz) || freqHz <= 0 || math.IsInf(freqHz, 0) {
		return fmt.Errorf("periph: GPIO%d: pwm: frequency %v Hz, want > 0", w.bcm, freqHz)
	}
	if err := w.p.PWM(toDuty(duty), toFrequency(freqHz)); err != nil {
		return fmt.Errorf("periph: GPIO%d: pwm: %w", w.bcm, err)
	}
	return nil
}

// Halt implements pwm.Pin: it stops the PWM generator and drives the pin
// low.
func (w *PWM) Halt() error {
	if err := w.p.Halt(); err != nil {
		return fmt.Errorf("periph: GPIO%d: halt: %w", w.bcm, err)
	}
	if err := w.p.Out(pgpio.Low); err != nil {
		return fmt.Errorf("periph: GPIO%d: halt: %w", w.bcm, err)
	}
	return nil
}

// toDuty converts a 0–1 duty to periph's fixed point.
func toDuty(duty float64) pgpio.Duty {
	return pgpio.Duty(math.Round(duty * float64(pgpio.DutyMax)))
}

// toFrequency converts hertz to periph's micro-hertz.
func toFrequency(hz float64) physic.Frequency {
	return physic.Frequency(math.Round(hz * float64(physic.Hertz)))
}

var _ pwm.Pin = (*PWM)(nil)
