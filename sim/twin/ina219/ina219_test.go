package ina219

import (
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"

	"github.com/saint-os/saint/sim/twin"
)

var _ twin.I2C = (*Device)(nil)

func read16(t *testing.T, d *Device, p byte) uint16 {
	t.Helper()
	r := make([]byte, 2)
	if err := d.Tx([]byte{p}, r); err != nil {
		t.Fatal(err)
	}
	return uint16(r[0])<<8 | uint16(r[1])
}

func TestResetValue(t *testing.T) {
	d := New(0)
	if got := read16(t, d, RegConfig); got != 0x399F {
		t.Errorf("config = %#04x, want 0x399F", got)
	}
	_ = d.Tx([]byte{RegConfig, 0x01, 0x9F}, nil)
	_ = d.Tx([]byte{RegCalibration, 0x10, 0x01}, nil)
	if got := read16(t, d, RegCalibration); got != 0x1000 {
		t.Errorf("calibration = %#04x, want 0x1000 (FS0 void)", got)
	}
	_ = d.Tx([]byte{RegConfig, 0x80, 0x00}, nil)
	if read16(t, d, RegConfig) != 0x399F || read16(t, d, RegCalibration) != 0 {
		t.Error("RST did not restore the reset values")
	}
	if read16(t, d, 0x09) != 0 {
		t.Error("a pointer past the last register reads non-zero")
	}
}

// TestDatasheetExample follows the datasheet's programming example:
// 0.1 Ω shunt, Current_LSB 100 µA, Cal = 4096.
func TestDatasheetExample(t *testing.T) {
	d := New(0.1)
	_ = d.Tx([]byte{RegCalibration, 0x10, 0x00}, nil)
	d.Set(12.0, 1.5)
	if got := int16(read16(t, d, RegShunt)); got != 15000 {
		t.Errorf("shunt = %d LSB, want 15000 (150 mV)", got)
	}
	bus := read16(t, d, RegBus)
	if bus>>3 != 3000 || bus&2 == 0 {
		t.Errorf("bus = %#04x, want 3000 LSB (12 V) with CNVR", bus)
	}
	if got := read16(t, d, RegCurrent); got != 15000 {
		t.Errorf("current = %d, want 15000 (1.5 A at 100 µA/LSB)", got)
	}
	// Power = 15000 × 3000 / 5000 = 9000 (×2 mW = 18 W).
	if got := read16(t, d, RegPower); got != 9000 {
		t.Errorf("power = %d, want 9000", got)
	}
	// ±40 mV range (PG = /1) saturates 150 mV at 4000 LSB.
	_ = d.Tx([]byte{RegConfig, 0x01, 0x9F}, nil)
	if got := int16(read16(t, d, RegShunt)); got != 4000 {
		t.Errorf("saturated shunt = %d, want 4000", got)
	}
	d.Set(5, -0.2)
	_ = d.Tx([]byte{RegConfig, 0x39, 0x9F}, nil)
	if got := int16(read16(t, d, RegShunt)); got != -2000 {
		t.Errorf("reverse shunt = %d, want -2000", got)
	}
}

func TestFlagsAndModes(t *testing.T) {
	d := New(0.1)
	_ = d.Tx([]byte{RegCalibration, 0x10, 0x00}, nil)
	d.Set(40, 1) // beyond the 32 V range
	if bus := read16(t, d, RegBus); bus>>3 != 8191 {
		t.Errorf("bus at 40 V = %d LSB, want the 13-bit limit 8191", bus>>3)
	}
	_ = d.Tx([]byte{RegConfig, 0x19, 0x9F}, nil) // BRNG = 16 V
	if bus := read16(t, d, RegBus); bus>>3 != 4000 {
		t.Errorf("bus at 40 V on the 16 V range = %d LSB, want 4000", bus>>3)
	}
	// Calibration so large that current overflows: OVF.
	_ = d.Tx([]byte{RegCalibration, 0xFF, 0xFE}, nil)
	if read16(t, d, RegBus)&1 == 0 {
		t.Error("OVF clear with the current calculation out of range")
	}
	// Power-down freezes the readings and stops conversions.
	_ = d.Tx([]byte{RegCalibration, 0x10, 0x00}, nil)
	_ = d.Tx([]byte{RegConfig, 0x39, 0x98}, nil)
	d.Set(5, 0.5)
	if bus := read16(t, d, RegBus); bus&2 != 0 || bus>>3 != 8191 {
		t.Errorf("powered down: bus %#04x, want frozen at 8191 with CNVR clear", bus)
	}
	// Negative current gives positive power.
	_ = d.Tx([]byte{RegConfig, 0x39, 0x9F}, nil)
	d.Set(10, -1)
	if p := read16(t, d, RegPower); p != 10000*2500/5000 {
		t.Errorf("power at -1 A, 10 V = %d, want %d", p, 10000*2500/5000)
	}
}

func TestConversionTiming(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch())
	d := NewWith(&Options{Clock: clk})
	if read16(t, d, RegBus)&2 != 0 {
		t.Error("CNVR set before the first conversion")
	}
	clk.Advance(1064 * time.Microsecond) // 2 × 532 µs at 12 bits
	if read16(t, d, RegBus)&2 == 0 {
		t.Error("CNVR clear after a full conversion")
	}
	read16(t, d, RegPower)
	if read16(t, d, RegBus)&2 != 0 {
		t.Error("reading power did not clear CNVR")
	}
}

func FuzzTx(f *testing.F) {
	f.Add([]byte{RegConfig, 0x39, 0x9F}, uint8(2))
	f.Add([]byte{RegCalibration, 0xFF, 0xFF, 0xFF}, uint8(7))
	f.Add([]byte{0xFF}, uint8(255))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, w []byte, n uint8) {
		d := New(0)
		d.Set(12, 1)
		if err := d.Tx(w, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		for p := byte(0); p < 8; p++ {
			d.Reg(p)
		}
	})
}
