package ina219

import (
	"testing"

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
