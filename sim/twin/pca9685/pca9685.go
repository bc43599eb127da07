package pca9685

import (
	"math"
	"sync"
	"time"
)

// Register addresses.
const (
	RegMode1      = 0x00
	RegMode2      = 0x01
	RegLED0OnL    = 0x06 // channel n's four registers start at RegLED0OnL + 4n
	RegAllLEDOnL  = 0xFA
	RegAllLEDOffH = 0xFD
	RegPreScale   = 0xFE
	RegTestMode   = 0xFF
)

// MODE1 and MODE2 bits.
const (
	Mode1Restart = 0x80
	Mode1AI      = 0x20
	Mode1Sleep   = 0x10
	Mode2Invrt   = 0x10
)

// SoftwareReset is the data byte of the general call (address 0x00) that
// resets every PCA9685 on the bus (SWRST, datasheet 7.6).
const SoftwareReset = 0x06

// Channels is the number of PWM outputs.
const Channels = 16

// OscillatorHz is the internal oscillator the prescaler divides.
const OscillatorHz = 25e6

const (
	fullBit   = 0x10 // bit 4 of LEDn_ON_H / LEDn_OFF_H
	lastLEDRg = RegLED0OnL + 4*Channels - 1
)

// Device is a PCA9685 twin. It implements twin.I2C. The zero value is not
// usable; call New. Methods are safe for concurrent use.
type Device struct {
	mu      sync.Mutex
	regs    [256]byte
	ptr     byte
	restart bool // MODE1.RESTART: slept while channels ran; outputs wait for a RESTART write
}

// New returns a chip just powered on.
func New() *Device {
	d := &Device{}
	d.reset()
	return d
}

// reset loads the power-on values; d.mu must be held or d unshared.
func (d *Device) reset() {
	d.regs = [256]byte{}
	d.ptr, d.restart = 0, false
	d.regs[RegMode1] = 0x11
	d.regs[RegMode2] = 0x04
	d.regs[0x02], d.regs[0x03], d.regs[0x04] = 0xE2, 0xE4, 0xE8 // SUBADR1–3
	d.regs[0x05] = 0xE0                                         // ALLCALLADR
	for ch := 0; ch < Channels; ch++ {
		d.regs[RegLED0OnL+4*ch+3] = fullBit
	}
	d.regs[RegAllLEDOffH] = fullBit
	d.regs[RegPreScale] = 0x1E
}

// GeneralCall implements twin.GeneralCaller: SWRST (0x06) resets the chip
// to its power-on state.
func (d *Device) GeneralCall(w []byte) {
	if len(w) > 0 && w[0] == SoftwareReset {
		d.mu.Lock()
		d.reset()
		d.mu.Unlock()
	}
}

// Tx implements twin.I2C.
func (d *Device) Tx(w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0]
		for _, b := range w[1:] {
			d.write(d.ptr, b)
			d.advance()
		}
	}
	for i := range r {
		r[i] = d.regs[d.ptr]
		if d.ptr == RegMode1 && d.restart {
			r[i] |= Mode1Restart
		}
		d.advance()
	}
	return nil
}

// advance moves the register pointer after a byte if MODE1.AI is set;
// d.mu must be held.
func (d *Device) advance() {
	if d.regs[RegMode1]&Mode1AI != 0 {
		d.ptr++
	}
}

// write applies one register write; d.mu must be held.
func (d *Device) write(reg, v byte) {
	switch {
	case reg == RegMode1:
		old := d.regs[RegMode1]
		if old&Mode1Sleep == 0 && v&Mode1Sleep != 0 && d.anyRunning() {
			d.restart = true
		}
		if v&Mode1Restart != 0 && v&Mode1Sleep == 0 {
			d.restart = false // writing 1 restarts the channels and clears it
		}
		d.regs[RegMode1] = v &^ Mode1Restart
	case reg <= lastLEDRg:
		d.regs[reg] = v
	case reg >= RegAllLEDOnL && reg <= RegAllLEDOffH:
		d.regs[reg] = v
		off := reg - RegAllLEDOnL
		for ch := 0; ch < Channels; ch++ {
			d.regs[RegLED0OnL+4*ch+int(off)] = v
		}
	case reg == RegPreScale:
		// The prescaler only takes a new value while the oscillator is off.
		if d.regs[RegMode1]&Mode1Sleep != 0 {
			d.regs[reg] = max(v, 3)
		}
	default:
		// Reserved addresses and TestMode: ignored.
	}
}

// anyRunning reports whether some channel is not full off; d.mu must be
// held.
func (d *Device) anyRunning() bool {
	for ch := 0; ch < Channels; ch++ {
		if d.regs[RegLED0OnL+4*ch+3]&fullBit == 0 {
			return true
		}
	}
	return false
}

// Reg returns register r.
func (d *Device) Reg(r byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[r]
}

// Asleep reports whether MODE1.SLEEP is set (oscillator off, outputs off).
func (d *Device) Asleep() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[RegMode1]&Mode1Sleep != 0
}

// Frequency returns the PWM frequency set by PRE_SCALE:
// OscillatorHz / (4096 × (PRE_SCALE + 1)).
func (d *Device) Frequency() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.freq()
}

func (d *Device) freq() float64 {
	return OscillatorHz / (4096 * (float64(d.regs[RegPreScale]) + 1))
}

// Duty returns the fraction of each period channel ch is high, 0–1: 0 while
// asleep, while waiting for a RESTART, or with the full-off bit, 1 with the
// full-on bit, otherwise ((OFF - ON) mod 4096) / 4096; MODE2.INVRT inverts
// it. A channel outside 0–15 reads 0.
func (d *Device) Duty(ch int) float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.duty(ch)
}

func (d *Device) duty(ch int) float64 {
	if ch < 0 || ch >= Channels {
		return 0
	}
	duty := d.rawDuty(ch)
	if d.regs[RegMode2]&Mode2Invrt != 0 {
		duty = 1 - duty
	}
	return duty
}

func (d *Device) rawDuty(ch int) float64 {
	if d.regs[RegMode1]&Mode1Sleep != 0 || d.restart {
		return 0
	}
	base := RegLED0OnL + 4*ch
	onL, onH, offL, offH := d.regs[base], d.regs[base+1], d.regs[base+2], d.regs[base+3]
	switch {
	case offH&fullBit != 0: // full off wins over full on
		return 0
	case onH&fullBit != 0:
		return 1
	}
	on := int(onH&0x0F)<<8 | int(onL)
	off := int(offH&0x0F)<<8 | int(offL)
	return float64((off-on)&0xFFF) / 4096
}

// PWMState returns channel ch as a PWM output: the chip's frequency, the
// duty (as Duty) and whether the channel produces pulses at all.
func (d *Device) PWMState(ch int) (freqHz, duty float64, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	duty = d.duty(ch)
	return d.freq(), duty, duty > 0
}

// Pulse returns how long channel ch is high in each period, rounded to the
// nanosecond: what a servo on it sees. A channel outside 0–15 reads 0.
func (d *Device) Pulse(ch int) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pulse(ch)
}

func (d *Device) pulse(ch int) time.Duration {
	return time.Duration(math.Round(d.duty(ch) / d.freq() * 1e9))
}

// Pulses returns every channel's pulse width at one instant, for physics
// that reads all the servos on the board each step.
func (d *Device) Pulses() [Channels]time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out [Channels]time.Duration
	for ch := range out {
		out[ch] = d.pulse(ch)
	}
	return out
}
