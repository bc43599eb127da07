package bts7960

import (
	"sync"

	"github.com/saint-os/saint/hal/gpio"
)

// Pins reads the controller's outputs, as the simulated board reports them.
type Pins interface {
	// PWMState returns the PWM a GPIO runs: frequency, duty 0–1, on.
	PWMState(bcm int) (freqHz, duty float64, on bool)
	// Level returns a GPIO's level.
	Level(bcm int) (gpio.Level, error)
}

// Wiring names the GPIOs (BCM) the module's inputs are wired to. REN and LEN
// may be the same pin. With PWM set, RPWM and LPWM are channels of that
// PWM controller (a PCA9685) instead of GPIOs.
type Wiring struct {
	RPWM, LPWM, REN, LEN int
	PWM                  PWMSource
}

// PWMSource is a PWM controller's outputs, as the PCA9685 twin reports
// them.
type PWMSource interface {
	PWMState(ch int) (freqHz, duty float64, on bool)
}

// Mode is what the bridge does to the motor.
type Mode int

const (
	Coast Mode = iota // outputs float: no torque, the motor turns freely
	Drive             // Duty of the supply across the motor, brake decay between pulses
	Brake             // both low sides on: the motor is shorted
	Fault             // both inputs on: outputs off until both enables go low
)

func (m Mode) String() string {
	return [...]string{"coast", "drive", "brake", "fault"}[m]
}

// Output is the bridge's effect on the motor.
type Output struct {
	Mode Mode
	// Duty is the fraction of the supply across the motor, −1…1, positive
	// with RPWM driving (M+ high); 0 unless Mode is Drive.
	Duty   float64
	FreqHz float64
}

// Bridge is a BTS7960 twin. Methods are safe for concurrent use.
type Bridge struct {
	pins Pins
	w    Wiring

	mu     sync.Mutex
	fault  bool
	faults int
}

// New returns the twin of a module wired to pins as w says.
func New(pins Pins, w Wiring) *Bridge { return &Bridge{pins: pins, w: w} }

func (b *Bridge) high(bcm int) bool {
	l, err := b.pins.Level(bcm)
	return err == nil && l == gpio.High
}

// Output reads the pins and returns what the bridge puts across the motor.
func (b *Bridge) Output() Output {
	var pwms PWMSource = b.pins
	if b.w.PWM != nil {
		pwms = b.w.PWM
	}
	fr, dr, onR := pwms.PWMState(b.w.RPWM)
	fl, dl, onL := pwms.PWMState(b.w.LPWM)
	if !onR {
		dr = 0
	}
	if !onL {
		dl = 0
	}
	enR, enL := b.high(b.w.REN), b.high(b.w.LEN)

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fault {
		if !enR && !enL {
			b.fault = false
		} else {
			return Output{Mode: Fault}
		}
	}
	if enR && enL && dr > 0 && dl > 0 {
		b.fault = true
		b.faults++
		return Output{Mode: Fault}
	}
	switch {
	case !enR || !enL:
		return Output{Mode: Coast}
	case dr > 0:
		return Output{Mode: Drive, Duty: min(dr, 1), FreqHz: fr}
	case dl > 0:
		return Output{Mode: Drive, Duty: -min(dl, 1), FreqHz: fl}
	}
	return Output{Mode: Brake}
}

// Faults returns how many times the bridge has latched a fault.
func (b *Bridge) Faults() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.faults
}
