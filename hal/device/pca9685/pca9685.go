package pca9685

import (
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/pwm"
)

// Channels is the number of outputs.
const Channels = 16

// Steps is the number of counts in one period.
const Steps = 4096

// DefaultAddr is the address with A0–A5 low.
const DefaultAddr = 0x40

// OscillatorHz is the internal oscillator's nominal frequency.
const OscillatorHz = 25e6

// Opts configures a Dev. Nil Opts, like zero fields, take the defaults.
type Opts struct {
	// Addr is the I²C address; 0 means DefaultAddr.
	Addr uint16
	// FreqHz is the PWM frequency of every channel; 0 means 50 Hz (hobby
	// servos).
	FreqHz float64
	// OscillatorHz is the clock PRE_SCALE divides; 0 means the internal
	// 25 MHz. Real chips run a few percent off; a measured value here
	// makes pulse widths exact.
	OscillatorHz float64
}

// Dev is a PCA9685 on an I²C bus. Methods are not safe for concurrent use.
type Dev struct {
	bus      i2c.Bus
	addr     uint16
	osc      float64
	prescale byte
	// wbuf holds a channel write's register and four bytes: a servo loop
	// setting its pulses every period then allocates nothing (buses do
	// not keep what they are given).
	wbuf [5]byte
}

// New configures the PCA9685 at opts.Addr on bus: all channels off, at the
// requested frequency, oscillator running.
func New(bus i2c.Bus, opts *Opts) (*Dev, error) {
	if opts == nil {
		opts = &Opts{}
	}
	d := &Dev{bus: bus, addr: opts.Addr, osc: opts.OscillatorHz}
	if d.addr == 0 {
		d.addr = DefaultAddr
	}
	if d.osc == 0 {
		d.osc = OscillatorHz
	}
	if !(d.osc > 0) || math.IsInf(d.osc, 0) {
		return nil, fmt.Errorf("pca9685: OscillatorHz %v: want a positive frequency", d.osc)
	}
	freq := opts.FreqHz
	if freq == 0 {
		freq = 50
	}
	p, err := d.prescaleFor(freq)
	if err != nil {
		return nil, err
	}
	steps := []struct {
		name string
		w    []byte
	}{
		{"MODE1", []byte{regMode1, mode1Sleep | mode1AI | mode1AllCall}},
		{"MODE2", []byte{regMode2, mode2OutDrv}},
		{"ALL_LED", []byte{regAllLEDOnL, 0, 0, 0, fullBit >> 8}},
		{"PRE_SCALE", []byte{regPreScale, p}},
		{"MODE1", []byte{regMode1, mode1AI | mode1AllCall}},
	}
	for _, s := range steps {
		if err := d.tx(s.name, s.w, nil); err != nil {
			return nil, err
		}
	}
	d.prescale = p
	return d, nil
}

// Prescale returns the PRE_SCALE value for freqHz from an oscillator of
// oscHz, rounded as the datasheet says, or an error when it falls outside
// 3–255.
func Prescale(oscHz, freqHz float64) (byte, error) {
	v := math.Round(oscHz/(Steps*freqHz)) - 1
	if !(v >= 3 && v <= 255) {
		return 0, fmt.Errorf("pca9685: %v Hz needs PRE_SCALE %v, outside 3–255 (%.0f–%.0f Hz)",
			freqHz, v, oscHz/(Steps*256), oscHz/(Steps*4))
	}
	return byte(v), nil
}

func (d *Dev) prescaleFor(freq float64) (byte, error) {
	if !(freq > 0) || math.IsInf(freq, 0) {
		return 0, fmt.Errorf("pca9685: frequency %v Hz: want a positive frequency", freq)
	}
	return Prescale(d.osc, freq)
}

// String returns "PCA9685{0x40}".
func (d *Dev) String() string { return fmt.Sprintf("PCA9685{0x%02x}", d.addr) }

// Frequency returns the real PWM frequency: osc / (4096 × (PRE_SCALE + 1)).
func (d *Dev) Frequency() float64 { return d.osc / (Steps * (float64(d.prescale) + 1)) }

// SetFrequency changes the frequency of every channel: sleep, PRE_SCALE,
// wake, and RESTART if the chip stopped running channels to sleep.
func (d *Dev) SetFrequency(freqHz float64) error {
	p, err := d.prescaleFor(freqHz)
	if err != nil {
		return err
	}
	if err := d.tx("MODE1", []byte{regMode1, mode1Sleep | mode1AI | mode1AllCall}, nil); err != nil {
		return err
	}
	if err := d.tx("PRE_SCALE", []byte{regPreScale, p}, nil); err != nil {
		return err
	}
	d.prescale = p
	return d.Wake()
}

// Sleep stops the oscillator: every output goes off, the registers keep
// their values. The chip remembers running channels in MODE1.RESTART.
func (d *Dev) Sleep() error {
	return d.tx("MODE1", []byte{regMode1, mode1Sleep | mode1AI | mode1AllCall}, nil)
}

// Wake starts the oscillator and, when MODE1.RESTART says channels were
// running before Sleep, restarts them.
func (d *Dev) Wake() error {
	var m [1]byte
	if err := d.tx("MODE1", []byte{regMode1}, m[:]); err != nil {
		return err
	}
	if err := d.tx("MODE1", []byte{regMode1, mode1AI | mode1AllCall}, nil); err != nil {
		return err
	}
	if m[0]&mode1Restart != 0 {
		return d.tx("MODE1", []byte{regMode1, mode1Restart | mode1AI | mode1AllCall}, nil)
	}
	return nil
}

// SetCounts sets channel ch to go high at count on and low at count off,
// 0–4095 each, within every 4096-count period. Staggering on across channels
// spreads the current the servos draw.
func (d *Dev) SetCounts(ch int, on, off uint16) error {
	if err := checkChannel(ch); err != nil {
		return err
	}
	if on >= Steps || off >= Steps {
		return fmt.Errorf("pca9685: channel %d: counts on %d off %d, want 0–4095", ch, on, off)
	}
	return d.setRaw(ch, on, off)
}

func (d *Dev) setRaw(ch int, on, off uint16) error {
	reg := byte(regLED0OnL + 4*ch)
	d.wbuf = [5]byte{reg, byte(on), byte(on >> 8), byte(off), byte(off >> 8)}
	if err := d.bus.Tx(d.addr, d.wbuf[:], nil); err != nil {
		return fmt.Errorf("pca9685: 0x%02x: writing LED%d: %w", d.addr, ch, err)
	}
	return nil
}

// FullOn drives channel ch high all the time.
func (d *Dev) FullOn(ch int) error {
	if err := checkChannel(ch); err != nil {
		return err
	}
	return d.setRaw(ch, fullBit, 0)
}

// FullOff drives channel ch low all the time.
func (d *Dev) FullOff(ch int) error {
	if err := checkChannel(ch); err != nil {
		return err
	}
	return d.setRaw(ch, 0, fullBit)
}

// AllOff turns every channel full off in one write (ALL_LED_OFF_H).
func (d *Dev) AllOff() error {
	return d.tx("ALL_LED", []byte{regAllLEDOnL, 0, 0, 0, fullBit >> 8}, nil)
}

// SetDuty sets channel ch high for duty (0–1) of each period: 0 is full
// off, 1 full on, anything between is rounded to the nearest count.
func (d *Dev) SetDuty(ch int, duty float64) error {
	if err := checkChannel(ch); err != nil {
		return err
	}
	if !(duty >= 0 && duty <= 1) {
		return fmt.Errorf("pca9685: channel %d: duty %v outside 0–1", ch, duty)
	}
	counts := math.Round(duty * Steps)
	switch {
	case counts <= 0:
		return d.FullOff(ch)
	case counts >= Steps:
		return d.FullOn(ch)
	}
	return d.setRaw(ch, 0, uint16(counts))
}

// SetPulse sets channel ch high for width at the start of each period,
// rounded to the nearest count at the real frequency (about 4.9 µs a count
// at 50 Hz). A width of 0 turns the channel off.
func (d *Dev) SetPulse(ch int, width time.Duration) error {
	period := time.Duration(float64(time.Second) / d.Frequency())
	if width < 0 || width > period {
		return fmt.Errorf("pca9685: channel %d: pulse %v outside 0–%v (one period at %.2f Hz)", ch, width, period, d.Frequency())
	}
	return d.SetDuty(ch, width.Seconds()*d.Frequency())
}

// Reset sends the general-call software reset: every PCA9685 on the bus
// returns to its power-on state (asleep, all channels off). Call New again
// afterwards.
func (d *Dev) Reset() error {
	if err := d.bus.Tx(0x00, []byte{swReset}, nil); err != nil {
		return fmt.Errorf("pca9685: general call SWRST: %w", err)
	}
	return nil
}

// Channel returns channel ch as a pwm.Pin.
func (d *Dev) Channel(ch int) (pwm.Pin, error) {
	if err := checkChannel(ch); err != nil {
		return nil, err
	}
	return &channel{d: d, ch: ch}, nil
}

func checkChannel(ch int) error {
	if ch < 0 || ch >= Channels {
		return fmt.Errorf("pca9685: channel %d, want 0–15", ch)
	}
	return nil
}

func (d *Dev) tx(name string, w, r []byte) error {
	if err := d.bus.Tx(d.addr, w, r); err != nil {
		verb := "writing"
		if len(r) > 0 {
			verb = "reading"
		}
		return fmt.Errorf("pca9685: 0x%02x: %s %s: %w", d.addr, verb, name, err)
	}
	return nil
}

// channel is one output as a pwm.Pin.
type channel struct {
	d  *Dev
	ch int
}

// PWM implements pwm.Pin. Every channel shares the chip's frequency: freqHz
// must be within 1 % of it (50 Hz on a chip running at 50.03 Hz is fine).
// What is kept is the pulse width, duty / freqHz, since that is what a
// servo reads; 0 and 1 stay full off and full on.
func (c *channel) PWM(duty, freqHz float64) error {
	f := c.d.Frequency()
	if !(math.Abs(freqHz-f) <= 0.01*f) {
		return fmt.Errorf("pca9685: channel %d: %v Hz asked, the chip runs every channel at %.2f Hz", c.ch, freqHz, f)
	}
	if duty > 0 && duty < 1 {
		duty = math.Min(duty*f/freqHz, 1)
	}
	return c.d.SetDuty(c.ch, duty)
}

// Halt implements pwm.Pin: full off.
func (c *channel) Halt() error { return c.d.FullOff(c.ch) }

// String returns "PCA9685{0x40}/3".
func (c *channel) String() string { return fmt.Sprintf("%s/%d", c.d, c.ch) }

var _ pwm.Pin = (*channel)(nil)

// SafeOff turns every output of the PCA9685 at addr on bus full off in one
// write (ALL_LED_OFF_H's full-off bit), without configuring the chip or
// reading it: what a process that did not set the chip up does to make
// its outputs safe (saint-node safe-outputs, after the node died). The
// chip keeps its frequency; a servo gets no more pulses and goes limp, a
// motor driver's PWM input stays low.
func SafeOff(bus i2c.Bus, addr uint16) error {
	if err := bus.Tx(addr, []byte{regAllLEDOnL, 0, 0, 0, fullBit >> 8}, nil); err != nil {
		return fmt.Errorf("pca9685: 0x%02x: all off: %w", addr, err)
	}
	return nil
}
