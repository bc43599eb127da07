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

// MODE1 bits.
const (
	Mode1AI    = 0x20
	Mode1Sleep = 0x10
)

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
	mu   sync.Mutex
	regs [256]byte
	ptr  byte
}

// New returns a chip just powered on.
func New() *Device {
	d := &Device{}
	d.regs[RegMode1] = 0x11
	d.regs[RegMode2] = 0x04
	d.regs[0x02], d.regs[0x03], d.regs[0x04] = 0xE2, 0xE4, 0xE8 // SUBADR1–3
	d.regs[0x05] = 0xE0                                         // ALLCALLADR
	for ch := 0; ch < Channels; ch++ {
		d.regs[RegLED0OnL+4*ch+3] = fullBit
	}
	d.regs[RegAllLEDOffH] = fullBit
	d.regs[RegPreScale] = 0x1E
	return d
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
// asleep or with the full-off bit, 1 with the full-on bit, otherwise
// ((OFF - ON) mod 4096) / 4096. It panics if ch is not 0–15.
func (d *Device) Duty(ch int) float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.duty(ch)
}

func (d *Device) duty(ch int) float64 {
	if ch < 0 || ch >= Channels {
		panic("pca9685: channel out of range")
	}
	if d.regs[RegMode1]&Mode1Sleep != 0 {
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

// Pulse returns how long channel ch is high in each period, rounded to the
// nanosecond: what a servo on it sees. It panics if ch is not 0–15.
func (d *Device) Pulse(ch int) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Duration(math.Round(d.duty(ch) / d.freq() * 1e9))
}
