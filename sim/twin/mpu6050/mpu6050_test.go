package mpu6050

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
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

func TestReservedRegisters(t *testing.T) {
	d := New()
	_ = d.Tx([]byte{0x00, 0xAA, 0xBB}, nil) // reserved 0x00, 0x01
	_ = d.Tx([]byte{0x50, 0x12}, nil)       // reserved
	if r := read(t, d, 0x00, 2); r[0] != 0 || r[1] != 0 {
		t.Errorf("reserved registers read %v after writes, want 0", r)
	}
	if d.Reg(0x50) != 0 {
		t.Errorf("reserved 0x50 = %#x", d.Reg(0x50))
	}
	// Writes past 0x7F wrap to 0x00 and do not panic.
	_ = d.Tx([]byte{0x7F, 1, 2, 3}, nil)
	_ = d.Tx([]byte{0xFF}, make([]byte, 300))
}

func TestNoiseDeterministic(t *testing.T) {
	readAll := func(seed uint64) []byte {
		d := NewWith(&Options{Seed: seed, Noise: TypicalNoise(seed)})
		_ = d.Tx([]byte{RegPwrMgmt1, 0}, nil)
		var out []byte
		for i := 0; i < 5; i++ {
			out = append(out, read(t, d, RegAccelXoutH, 14)...)
		}
		return out
	}
	a, b, c := readAll(7), readAll(7), readAll(8)
	if string(a) != string(b) {
		t.Error("same seed gave different readings")
	}
	if string(a) == string(c) {
		t.Error("different seeds gave the same readings")
	}
	if string(a[:14]) == string(a[14:28]) {
		t.Error("noise did not change between samples")
	}
}

func TestMotion(t *testing.T) {
	d := New()
	_ = d.Tx([]byte{RegPwrMgmt1, 0}, nil)
	// Upside down (180° about x), accelerating upwards at 1 m/s².
	d.SetMotion(twin.Motion{Orientation: [4]float64{0, 1, 0, 0}, LinearAccel: [3]float64{0, 0, 1}})
	b := read(t, d, RegAccelXoutH, 6)
	want := int16(math.Round(-(StandardGravity + 1) / StandardGravity * 16384))
	if got := s16(b[4:]); got != want {
		t.Errorf("ACCEL_Z upside down = %d, want %d", got, want)
	}
}

func FuzzTx(f *testing.F) {
	f.Add([]byte{RegPwrMgmt1, 0x00}, uint8(14))
	f.Add([]byte{RegAccelXoutH}, uint8(200))
	f.Add([]byte{RegPwrMgmt1, 0x80, 0x00, 0xFF}, uint8(1))
	f.Add([]byte{RegIntPinCfg, 0xFF, 0xFF}, uint8(3))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, w []byte, n uint8) {
		d := New()
		r := make([]byte, n)
		if err := d.Tx(w, r); err != nil {
			t.Fatal(err)
		}
		if d.Reg(RegWhoAmI) != WhoAmI {
			t.Fatal("WHO_AM_I changed")
		}
	})
}

// interruptLine runs the twin on a virtual executor and records INT.
func interruptLine(t *testing.T, d *Device, ex *executor.Executor) *[]gpio.Level {
	t.Helper()
	var levels []gpio.Level
	d.WireInterrupt(ex, func(l gpio.Level) { levels = append(levels, l) })
	return &levels
}

func TestInterruptModes(t *testing.T) {
	ex := executor.NewVirtual()
	d := NewWith(&Options{Clock: ex.Clock()})
	levels := interruptLine(t, d, ex)
	run := func(dt time.Duration, f func()) {
		t.Helper()
		if f != nil {
			ex.Post(f)
		}
		if err := ex.RunFor(t.Context(), dt); err != nil {
			t.Fatal(err)
		}
	}
	// 1 kHz (DLPF on, divider 0), latched, cleared by reading INT_STATUS.
	run(0, func() {
		_ = d.Tx([]byte{RegSmplrtDiv, 0, 1}, nil)
		_ = d.Tx([]byte{RegIntPinCfg, intLatch, dataRdy}, nil)
		_ = d.Tx([]byte{RegPwrMgmt1, 0}, nil)
	})
	run(5*time.Millisecond, nil)
	if got := *levels; len(got) != 2 || got[0] != gpio.Low || got[1] != gpio.High {
		t.Fatalf("latched INT after 5 samples: %v, want [low high] (held)", got)
	}
	// Reading another register does not clear it; INT_STATUS does.
	r := make([]byte, 1)
	run(0, func() { _ = d.Tx([]byte{RegWhoAmI}, r) })
	if len(*levels) != 2 {
		t.Fatal("a read of WHO_AM_I cleared the latched interrupt")
	}
	run(0, func() { _ = d.Tx([]byte{RegIntStatus}, r) })
	if r[0] != dataRdy || (*levels)[len(*levels)-1] != gpio.Low {
		t.Fatalf("INT_STATUS %#x, INT %v after reading it", r[0], *levels)
	}
	// Active low with INT_RD_CLEAR: idle high, low at the next sample,
	// released by any read.
	run(0, func() { _ = d.Tx([]byte{RegIntPinCfg, intLevelLow | intLatch | intReadClear}, nil) })
	n := len(*levels)
	if (*levels)[n-1] != gpio.High {
		t.Fatalf("active-low INT idles %v", (*levels)[n-1])
	}
	run(time.Millisecond, nil)
	if (*levels)[len(*levels)-1] != gpio.Low {
		t.Fatal("active-low INT not asserted at a sample")
	}
	run(0, func() { _ = d.Tx([]byte{RegAccelXoutH}, make([]byte, 6)) })
	if (*levels)[len(*levels)-1] != gpio.High {
		t.Error("any read did not clear INT with INT_RD_CLEAR")
	}
	// Asleep: no more samples, no more edges.
	run(0, func() { _ = d.Tx([]byte{RegPwrMgmt1, pwrSleep}, nil) })
	n = len(*levels)
	run(10*time.Millisecond, nil)
	if len(*levels) != n {
		t.Errorf("INT moved while asleep: %v", (*levels)[n:])
	}
	if rate := d.SampleRate(); rate != 1000 {
		t.Errorf("SampleRate = %v, want 1000", rate)
	}
}

// Data registers change only at sample instants on a clock.
func TestSamplesHeldBetweenTicks(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch())
	d := NewWith(&Options{Clock: clk})
	_ = d.Tx([]byte{RegConfig, 1}, nil) // 1 kHz
	_ = d.Tx([]byte{RegPwrMgmt1, 0}, nil)
	d.Set(Sample{Accel: [3]float64{StandardGravity, 0, 0}})
	clk.Advance(time.Millisecond)
	if got := s16(read(t, d, RegAccelXoutH, 2)); got != 16384 {
		t.Fatalf("ACCEL_X = %d after the first sample, want 16384", got)
	}
	d.Set(Sample{Accel: [3]float64{-StandardGravity, 0, 0}})
	clk.Advance(500 * time.Microsecond)
	if got := s16(read(t, d, RegAccelXoutH, 2)); got != 16384 {
		t.Errorf("ACCEL_X = %d between samples, want the held 16384", got)
	}
	if read(t, d, RegIntStatus, 1)[0] != dataRdy || read(t, d, RegIntStatus, 1)[0] != 0 {
		t.Error("INT_STATUS not set once then cleared by reading it")
	}
	clk.Advance(500 * time.Microsecond)
	if got := s16(read(t, d, RegAccelXoutH, 2)); got != -16384 {
		t.Errorf("ACCEL_X = %d after the next sample, want -16384", got)
	}
}
