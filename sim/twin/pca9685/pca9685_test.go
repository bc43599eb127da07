package pca9685

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/sim/twin"
)

var _ twin.I2C = (*Device)(nil)

func TestResetValues(t *testing.T) {
	d := New()
	for reg, want := range map[byte]byte{RegMode1: 0x11, RegMode2: 0x04, 0x09: 0x10, 0x45: 0x10, RegPreScale: 0x1E} {
		r := make([]byte, 1)
		if err := d.Tx([]byte{reg}, r); err != nil || r[0] != want {
			t.Errorf("reg %#x = %#x, %v; want %#x", reg, r[0], err, want)
		}
	}
	if f := d.Frequency(); math.Abs(f-196.9) > 0.1 {
		t.Errorf("Frequency() = %v, want ≈ 197 Hz (the datasheet's nominal 200 Hz)", f)
	}
	if !d.Asleep() || d.Duty(0) != 0 {
		t.Error("a chip just powered on drives outputs")
	}
}

// TestServoSetup runs what a PCA9685 driver does to drive a servo at 50 Hz
// with a 1.5 ms pulse on channel 3.
func TestServoSetup(t *testing.T) {
	d := New()
	tx := func(w ...byte) {
		if err := d.Tx(w, nil); err != nil {
			t.Fatal(err)
		}
	}
	tx(RegMode1, 0x10)       // sleep, AI off
	tx(RegPreScale, 121)     // 25 MHz / (4096 × 50 Hz) - 1 ≈ 121
	tx(RegMode1, 0x20)       // wake, auto-increment
	tx(RegLED0OnL+4*3, 0, 0) // ON = 0
	// OFF = 307 counts ≈ 1.5 ms at 50 Hz, written as a burst.
	tx(RegLED0OnL+4*3+2, 307&0xFF, 307>>8)
	if f := d.Frequency(); math.Abs(f-50.03) > 0.01 {
		t.Errorf("Frequency() = %v, want ≈ 50 Hz", f)
	}
	if p := d.Pulse(3); p < 1495*time.Microsecond || p > 1505*time.Microsecond {
		t.Errorf("Pulse(3) = %v, want ≈ 1.5 ms", p)
	}
	if d.Duty(4) != 0 {
		t.Error("an untouched channel is on")
	}
	// Burst read with AI: MODE1 then MODE2.
	r := make([]byte, 2)
	_ = d.Tx([]byte{RegMode1}, r)
	if r[0] != 0x20 || r[1] != 0x04 {
		t.Errorf("burst read of MODE1, MODE2 = %#x", r)
	}
}

func TestRulesOfTheChip(t *testing.T) {
	d := New()
	_ = d.Tx([]byte{RegMode1, 0x00}, nil) // awake, AI off
	_ = d.Tx([]byte{RegPreScale, 0x79}, nil)
	if d.Reg(RegPreScale) != 0x1E {
		t.Error("PRE_SCALE changed while the oscillator ran")
	}
	// Without AI, a burst writes the same register over and over.
	_ = d.Tx([]byte{RegLED0OnL, 1, 2, 3}, nil)
	if d.Reg(RegLED0OnL) != 3 || d.Reg(RegLED0OnL+1) != 0 {
		t.Errorf("without AI: LED0_ON_L %d ON_H %d, want 3 0", d.Reg(RegLED0OnL), d.Reg(RegLED0OnL+1))
	}
	// ALL_LED_ON_H full on, ALL_LED_OFF_H cleared: every channel full on.
	_ = d.Tx([]byte{RegAllLEDOnL + 1, 0x10}, nil)
	_ = d.Tx([]byte{RegAllLEDOffH, 0x00}, nil)
	for ch := 0; ch < Channels; ch++ {
		if d.Duty(ch) != 1 {
			t.Errorf("channel %d duty %v after ALL_LED full on, want 1", ch, d.Duty(ch))
		}
	}
	_ = d.Tx([]byte{RegMode1, 0x10}, nil)
	_ = d.Tx([]byte{RegPreScale, 0}, nil)
	if d.Reg(RegPreScale) != 3 {
		t.Errorf("PRE_SCALE = %d, want the chip's minimum 3", d.Reg(RegPreScale))
	}
	if d.Duty(0) != 0 {
		t.Error("outputs on while asleep")
	}
	if d.Duty(16) != 0 || d.Pulse(-1) != 0 {
		t.Error("a channel that does not exist reads on")
	}
}

func TestRestartAndSoftwareReset(t *testing.T) {
	d := New()
	_ = d.Tx([]byte{RegMode1, 0x20}, nil)               // wake, AI
	_ = d.Tx([]byte{RegLED0OnL, 0, 0, 0x00, 0x08}, nil) // channel 0 at 50 %
	_ = d.Tx([]byte{RegMode1, 0x30}, nil)               // sleep while running
	r := make([]byte, 1)
	_ = d.Tx([]byte{RegMode1}, r)
	if r[0]&Mode1Restart == 0 {
		t.Fatalf("MODE1 = %#x after sleeping with a channel on, want RESTART set", r[0])
	}
	_ = d.Tx([]byte{RegMode1, 0x20}, nil) // wake: outputs wait for RESTART
	if d.Duty(0) != 0 {
		t.Error("outputs ran before RESTART was written")
	}
	_ = d.Tx([]byte{RegMode1, 0xA0}, nil) // RESTART
	if d.Duty(0) != 0.5 || d.Reg(RegMode1)&Mode1Restart != 0 {
		t.Errorf("after RESTART duty %v MODE1 %#x", d.Duty(0), d.Reg(RegMode1))
	}
	_ = d.Tx([]byte{RegMode2, 0x14}, nil) // INVRT
	if d.Duty(0) != 0.5 || d.Duty(1) != 1 {
		t.Errorf("inverted: duty %v %v, want 0.5 1", d.Duty(0), d.Duty(1))
	}
	if p := d.Pulses(); p[0] != d.Pulse(0) {
		t.Error("Pulses disagrees with Pulse")
	}
	d.GeneralCall([]byte{SoftwareReset})
	if d.Reg(RegMode1) != 0x11 || d.Reg(RegLED0OnL+3) != 0x10 {
		t.Error("SWRST did not restore the power-on values")
	}
}

func FuzzTx(f *testing.F) {
	f.Add([]byte{RegMode1, 0x20}, uint8(2))
	f.Add([]byte{RegLED0OnL, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(0))
	f.Add([]byte{0xFF, 0xFF, 0xFF}, uint8(255))
	f.Add([]byte{RegAllLEDOnL, 0xFF, 0xFF, 0xFF, 0xFF}, uint8(1))
	f.Fuzz(func(t *testing.T, w []byte, n uint8) {
		d := New()
		_ = d.Tx([]byte{RegMode1, 0x20}, nil)
		if err := d.Tx(w, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Pulses() {
			if p < 0 || p > time.Duration(1e9/d.Frequency())+1 {
				t.Fatalf("pulse %v outside one period", p)
			}
		}
	})
}
