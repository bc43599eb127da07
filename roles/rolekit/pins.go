package rolekit

import (
	"fmt"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/device/pca9685"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/pwm"
	"github.com/saint-os/saint/roleconfig"
)

// servoNeutralPulseUS is where a hobby servo rests: the pulse a servo
// function gets when it is claimed, before the role drives it.
const servoNeutralPulseUS = 1500.0

// Pins is the set of header pins a role claimed from its gpio_mapping and
// the PCA9685 channels of its pwm_outputs, opened and put in their
// configured mode. Actuators start safe: servos at neutral, motor PWM at
// zero duty, outputs low. A role sees a PWM function the same whether a
// header pin or a PCA9685 channel produces it.
type Pins struct {
	board board.Board
	pwm   map[string]pwm.Pin
	out   map[string]gpio.PinIO
	// enables are driven active once everything else is open, and
	// inactive first when the pins are released.
	enables map[string]enablePin
	in      map[string]gpio.PinIO
	freq    map[string]float64
	chips   map[pcaKey]*pca9685.Dev
}

// pcaKey is a PCA9685 by bus and address.
type pcaKey struct{ bus, addr int }

// enablePin is an enable function's pin and its active level.
type enablePin struct {
	pin    gpio.PinIO
	active gpio.Level
}

// claimPins claims and opens every function of cfg.GPIOMapping and
// cfg.PWMOutputs. On error, everything claimed so far is released.
func claimPins(b board.Board, cfg *roleconfig.Config) (*Pins, error) {
	p := &Pins{
		board:   b,
		pwm:     map[string]pwm.Pin{},
		out:     map[string]gpio.PinIO{},
		enables: map[string]enablePin{},
		in:      map[string]gpio.PinIO{},
		freq:    map[string]float64{},
		chips:   map[pcaKey]*pca9685.Dev{},
	}
	hw := b.Hardware()
	for _, name := range cfg.FunctionNames() {
		f := cfg.GPIOMapping[name]
		if f.Type == "enable" {
			continue
		}
		if err := p.open(hw, name, f); err != nil {
			p.release()
			return nil, fmt.Errorf("gpio_mapping.%s (GPIO%d): %w", name, f.Pin, err)
		}
	}
	for _, name := range cfg.PWMOutputNames() {
		o := cfg.PWMOutputs[name]
		if err := p.openPCA(hw, name, o); err != nil {
			p.release()
			return nil, fmt.Errorf("pwm_outputs.%s (PCA9685 0x%02x channel %d): %w", name, o.PCA9685, o.Channel, err)
		}
	}
	// Enables last: what they enable is in its safe starting state by now
	// (a PCA9685's channels at neutral or zero).
	for _, name := range cfg.FunctionNames() {
		f := cfg.GPIOMapping[name]
		if f.Type != "enable" {
			continue
		}
		if err := p.openEnable(hw, name, f); err != nil {
			p.release()
			return nil, fmt.Errorf("gpio_mapping.%s (GPIO%d): %w", name, f.Pin, err)
		}
	}
	return p, nil
}

// openPCA opens a PCA9685 channel, configuring the chip (all channels off,
// at the output's frequency) the first time one of its channels is used.
// The frequency recorded is the chip's real one, which the prescaler
// rounds: drivers then ask for exactly what it runs.
func (p *Pins) openPCA(hw board.Hardware, name string, o roleconfig.PWMOutput) error {
	k := pcaKey{o.I2CBus(), o.PCA9685}
	dev := p.chips[k]
	if dev == nil {
		bus, err := hw.I2C(k.bus)
		if err != nil {
			return err
		}
		if dev, err = pca9685.New(bus, &pca9685.Opts{Addr: uint16(k.addr), FreqHz: o.Frequency}); err != nil {
			return err
		}
		p.chips[k] = dev
	}
	pin, err := dev.Channel(o.Channel)
	if err != nil {
		return err
	}
	freq := dev.Frequency()
	duty := 0.0
	if freq <= 400 {
		duty = servoNeutralPulseUS * 1e-6 * freq
	}
	if err := pin.PWM(duty, freq); err != nil {
		return err
	}
	p.pwm[name], p.freq[name] = pin, freq
	return nil
}

// PWM returns the pwm function name, nil when the mapping has none.
func (p *Pins) PWM(name string) pwm.Pin { return p.pwm[name] }

// Frequency returns the frequency of the pwm function name, Hz: the
// configured one on a header pin, what the chip really runs on a PCA9685.
func (p *Pins) Frequency(name string) float64 { return p.freq[name] }

// Output returns the output function name, nil when the mapping has none.
func (p *Pins) Output(name string) gpio.PinIO { return p.out[name] }

// Input returns the input or encoder function name, nil when the mapping
// has none.
func (p *Pins) Input(name string) gpio.PinIO { return p.in[name] }

// Inputs returns the input and encoder functions by name.
func (p *Pins) Inputs() map[string]gpio.PinIO {
	m := make(map[string]gpio.PinIO, len(p.in))
	for k, v := range p.in {
		m[k] = v
	}
	return m
}

func (p *Pins) open(hw board.Hardware, name string, f roleconfig.GPIOFunction) error {
	switch f.Type {
	case "pwm":
		if err := p.board.Claim(f.Pin, board.DirPWM, name); err != nil {
			return err
		}
		pin, err := hw.PWM(f.Pin)
		if err != nil {
			return err
		}
		duty := 0.0
		if isServo(f) {
			duty = servoNeutralPulseUS * 1e-6 * f.Frequency
		}
		if err := pin.PWM(duty, f.Frequency); err != nil {
			return err
		}
		p.pwm[name], p.freq[name] = pin, f.Frequency
	case "output":
		if err := p.board.Claim(f.Pin, board.DirOutput, name); err != nil {
			return err
		}
		pin, err := hw.GPIO(f.Pin)
		if err != nil {
			return err
		}
		if err := pin.Out(gpio.Low); err != nil {
			return err
		}
		p.out[name] = pin
	case "input", "encoder":
		if err := p.board.Claim(f.Pin, board.DirInput, name); err != nil {
			return err
		}
		pin, err := hw.GPIO(f.Pin)
		if err != nil {
			return err
		}
		pull := gpio.Float
		switch f.Pull {
		case "up":
			pull = gpio.PullUp
		case "down":
			pull = gpio.PullDown
		}
		if err := pin.In(pull, gpio.BothEdges); err != nil {
			return err
		}
		p.in[name] = pin
	}
	return nil
}

// openEnable claims an enable and drives it active.
func (p *Pins) openEnable(hw board.Hardware, name string, f roleconfig.GPIOFunction) error {
	if err := p.board.Claim(f.Pin, board.DirOutput, name); err != nil {
		return err
	}
	pin, err := hw.GPIO(f.Pin)
	if err != nil {
		return err
	}
	active := gpio.Level(!f.ActiveLow())
	if err := pin.Out(active); err != nil {
		return err
	}
	p.enables[name] = enablePin{pin: pin, active: active}
	return nil
}

// isServo tells hobby-servo PWM (50–400 Hz) from motor PWM (kHz).
func isServo(f roleconfig.GPIOFunction) bool { return f.Frequency > 0 && f.Frequency <= 400 }

// release drives the enables inactive, halts PWM, drives outputs low and
// gives every pin back.
func (p *Pins) release() {
	for _, e := range p.enables {
		_ = e.pin.Out(!e.active)
	}
	for _, pin := range p.pwm {
		_ = pin.Halt()
	}
	for _, pin := range p.out {
		_ = pin.Out(gpio.Low)
	}
	p.board.ReleaseAll()
}
