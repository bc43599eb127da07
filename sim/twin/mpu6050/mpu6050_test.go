package mpu6050

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/twin"
)

var _ twin.I2C = (*Device)(nil)

func read(t *testing.T, d *Device, reg byte, n int) []byte {
	t.Helper()
	r := make([]byte, n)
	if err := d.Tx([]byte{reg}, r); err != nil {
		t.Fatal(err)
	}
	return r
}

func s16(b []byte) int16 { return int16(uint16(b[0])<<8 | uint16(b[1])) }

func TestIdentityAndReset(t *testing.T) {
	d := New()
	if got := read(t, d, RegWhoAmI, 1)[0]; got != 0x68 {
		t.Errorf("WHO_AM_I = %#x, want 0x68", got)
	}
	if got := read(t, d, RegPwrMgmt1, 1)[0]; got != 0x40 {
		t.Errorf("PWR_MGMT_1 = %#x, want 0x40", got)
	}
	_ = d.Tx([]byte{RegWhoAmI, 0x00}, nil)
	if d.Reg(RegWhoAmI) != 0x68 {
		t.Error("WHO_AM_I was writable")
	}
	_ = d.Tx([]byte{RegPwrMgmt1, 0x00}, nil)
	_ = d.Tx([]byte{RegAccelConfig, 0x18}, nil)
	if d.Asleep() {
		t.Error("still asleep after PWR_MGMT_1 = 0")
	}
	_ = d.Tx([]byte{RegPwrMgmt1, 0x80}, nil)
	if !d.Asleep() || d.Reg(RegAccelConfig) != 0 {
		t.Error("DEVICE_RESET did not restore reset values")
	}
}

func TestBurstReadScaled(t *testing.T) {
	d := New()
	// Asleep: data registers hold their reset values.
	if b := read(t, d, RegAccelXoutH, 14); s16(b[4:]) != 0 {
		t.Errorf("asleep, ACCEL_Z = %d, want 0", s16(b[4:]))
	}
	_ = d.Tx([]byte{RegPwrMgmt1, 0x00}, nil)
	d.Set(Sample{Accel: [3]float64{0, StandardGravity / 2, StandardGravity}, Gyro: [3]float64{0, 0, math.Pi / 180 * 10}, TempC: 36.53})
	b := read(t, d, RegAccelXoutH, 14)
	if ax, ay, az := s16(b[0:]), s16(b[2:]), s16(b[4:]); ax != 0 || ay != 8192 || az != 16384 {
		t.Errorf("accel = %d %d %d, want 0 8192 16384", ax, ay, az)
	}
	if tmp := s16(b[6:]); tmp != 0 {
		t.Errorf("TEMP_OUT = %d, want 0 at 36.53 °C", tmp)
	}
	if gz := s16(b[12:]); gz != 1310 {
		t.Errorf("GYRO_Z = %d, want 1310 at 10 °/s", gz)
	}
	// ±16 g and ±2000 °/s.
	_ = d.Tx([]byte{RegGyroConfig, 0x18, 0x18}, nil)
	b = read(t, d, RegAccelXoutH, 14)
	if az, gz := s16(b[4:]), s16(b[12:]); az != 2048 || gz != 164 {
		t.Errorf("at full range: accel z %d gyro z %d, want 2048 164", az, gz)
	}
	// Saturation.
	d.Set(Sample{Accel: [3]float64{100 * StandardGravity, -100 * StandardGravity, math.NaN()}})
	b = read(t, d, RegAccelXoutH, 6)
	if s16(b[0:]) != math.MaxInt16 || s16(b[2:]) != math.MinInt16 || s16(b[4:]) != 0 {
		t.Errorf("saturated accel = %v", b)
	}
}
