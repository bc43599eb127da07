package mpu6050_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/mpu6050"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c/i2ctest"
	"github.com/saint-os/saint/sim/twin"
	twinmpu "github.com/saint-os/saint/sim/twin/mpu6050"
)

// The start-up sequence of RM-MPU-6000A: identify, wake on the gyro PLL,
// then rate, filter and ranges, then the interrupt pin.
func initScript(addr uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x75}, R: []byte{0x68}},        // WHO_AM_I
		{Addr: addr, W: []byte{0x6B, 0x01}},                   // PWR_MGMT_1: awake, CLKSEL = PLL X gyro
		{Addr: addr, W: []byte{0x19, 0x09, 0x03, 0x08, 0x00}}, // SMPLRT_DIV 9, DLPF 44 Hz, ±500 °/s, ±2 g
		{Addr: addr, W: []byte{0x37, 0x00, 0x01}},             // INT_PIN_CFG pulse, INT_ENABLE DATA_RDY_EN
	}
}

func TestNewAndSensePlayback(t *testing.T) {
	ops := append(initScript(0x68),
		i2ctest.IO{Addr: 0x68, W: []byte{0x3A}, R: []byte{0x01}}, // INT_STATUS: data ready
		i2ctest.IO{Addr: 0x68, W: []byte{0x3B}, R: []byte{
			0x40, 0x00, 0xC0, 0x00, 0x00, 0x00, // accel +1 g, -1 g, 0 at ±2 g
			0x00, 0x00, // TEMP_OUT 0: 36.53 °C
			0x00, 0x83, 0xFF, 0x7D, 0x00, 0x00, // gyro +131, -131 LSB at ±500 °/s: ±2 °/s
		}},
	)
	bus := &i2ctest.Playback{Ops: ops}
	d, err := mpu6050.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rdy, err := d.DataReady(); err != nil || !rdy {
		t.Fatalf("DataReady = %v, %v", rdy, err)
	}
	s, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("accel x", s.Accel[0], 9.80665, 1e-9)
	near("accel y", s.Accel[1], -9.80665, 1e-9)
	near("temp", s.TempC, 36.53, 1e-9)
	near("gyro x", s.Gyro[0], 2*math.Pi/180, 1e-9)
	near("gyro y", s.Gyro[1], -2*math.Pi/180, 1e-9)
	if got := d.SampleRate(); got != 100 {
		t.Errorf("SampleRate = %v, want 100", got)
	}
}

func TestSettersPlayback(t *testing.T) {
	ops := append(initScript(0x69),
		i2ctest.IO{Addr: 0x69, W: []byte{0x1C, 0x18}},       // ACCEL_CONFIG ±16 g
		i2ctest.IO{Addr: 0x69, W: []byte{0x1B, 0x18}},       // GYRO_CONFIG ±2000 °/s
		i2ctest.IO{Addr: 0x69, W: []byte{0x19, 0x00, 0x00}}, // 8 kHz, DLPF off (260 Hz)
		i2ctest.IO{Addr: 0x69, W: []byte{0x6B, 0x41}},       // sleep
		i2ctest.IO{Addr: 0x69, W: []byte{0x6B, 0x01}},       // wake
		i2ctest.IO{Addr: 0x69, W: []byte{0x6B, 0x80}},       // DEVICE_RESET
	)
	bus := &i2ctest.Playback{Ops: ops}
	o := mpu6050.DefaultOpts()
	o.Addr = 0x69
	d, err := mpu6050.New(bus, &o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{
		func() error { return d.SetAccelRange(mpu6050.Accel16G) },
		func() error { return d.SetGyroRange(mpu6050.Gyro2000) },
		func() error { return d.SetRate(mpu6050.DLPF260, 0) },
		d.Sleep, d.Wake, d.Reset,
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if d.SampleRate() != 8000 {
		t.Errorf("SampleRate = %v, want 8000", d.SampleRate())
	}
	if err := d.SetAccelRange(7); err == nil {
		t.Error("SetAccelRange(7) succeeded")
	}
}

func TestWrongChip(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: 0x68, W: []byte{0x75}, R: []byte{0x70}}}}
	_, err := mpu6050.New(bus, nil)
	var we *mpu6050.WhoAmIError
	if !errors.As(err, &we) || we.Got != 0x70 {
		t.Fatalf("New on an MPU6500 = %v", err)
	}
	for _, want := range []string{"0x70", "want 0x68"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestNACKNamesAddress(t *testing.T) {
	bus := &twin.I2CBus{Name: "i2c-1"}
	_, err := mpu6050.New(bus, nil)
	var nack *twin.NACKError
	if !errors.As(err, &nack) || !strings.Contains(err.Error(), "0x68") || !strings.Contains(err.Error(), "WHO_AM_I") {
		t.Fatalf("New on an empty bus = %v", err)
	}
}

func TestBadOpts(t *testing.T) {
	for _, o := range []mpu6050.Opts{{AccelRange: 4}, {GyroRange: 9}, {DLPF: 8}} {
		if _, err := mpu6050.New(&i2ctest.Playback{}, &o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestAgainstTwin(t *testing.T) {
	chip := twinmpu.New()
	bus := &twin.I2CBus{}
	bus.Attach(0x68, chip)
	o := mpu6050.DefaultOpts()
	o.AccelRange, o.GyroRange = mpu6050.Accel4G, mpu6050.Gyro1000
	d, err := mpu6050.New(bus, &o)
	if err != nil {
		t.Fatal(err)
	}
	if chip.Asleep() {
		t.Fatal("New left the chip asleep")
	}
	// Tilted 30° about x, turning at 1 rad/s about z.
	th := 30 * math.Pi / 180
	chip.SetMotion(twin.Motion{
		Orientation: [4]float64{math.Cos(th / 2), math.Sin(th / 2), 0, 0},
		AngularRate: [3]float64{0, 0, 1},
	})
	chip.SetTemperature(30)
	s, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	want := [3]float64{0, 9.80665 * math.Sin(th), 9.80665 * math.Cos(th)}
	for i := range want {
		if math.Abs(s.Accel[i]-want[i]) > 0.005 { // one LSB at ±4 g is 0.0024 m/s²
			t.Errorf("accel[%d] = %v, want %v", i, s.Accel[i], want[i])
		}
	}
	if math.Abs(s.Gyro[2]-1) > 0.001 || math.Abs(s.TempC-30) > 0.003 {
		t.Errorf("gyro z %v temp %v, want 1 rad/s and 30 °C", s.Gyro[2], s.TempC)
	}
}

// On a virtual clock the twin samples at the configured rate and pulses
// INT once per sample; the driver reads one sample per rising edge.
func TestDataReadyOnTwinClock(t *testing.T) {
	ex := executor.NewVirtual()
	chip := twinmpu.NewWith(&twinmpu.Options{Clock: ex.Clock()})
	var rises []time.Time
	var last gpio.Level
	stop := chip.WireInterrupt(ex, func(l gpio.Level) {
		if l && !last {
			rises = append(rises, ex.Now())
		}
		last = l
	})
	defer stop()
	bus := &twin.I2CBus{}
	bus.Attach(0x68, chip)
	var d *mpu6050.Dev
	ex.Post(func() {
		var err error
		if d, err = mpu6050.New(bus, nil); err != nil {
			t.Error(err)
		}
	})
	if err := ex.RunFor(t.Context(), 105*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// 100 Hz: edges at 10, 20, ..., 100 ms after wake.
	if len(rises) != 10 {
		t.Fatalf("%d rising edges in 105 ms at 100 Hz, want 10", len(rises))
	}
	if gap := rises[1].Sub(rises[0]); gap != 10*time.Millisecond {
		t.Errorf("edges %v apart, want 10ms", gap)
	}
	var rdy bool
	ex.Post(func() { rdy, _ = d.DataReady() })
	_ = ex.RunFor(t.Context(), 0)
	if !rdy {
		t.Error("DATA_RDY clear after samples")
	}
	ex.Post(func() { rdy, _ = d.DataReady() })
	_ = ex.RunFor(t.Context(), 0)
	if rdy {
		t.Error("DATA_RDY still set after reading INT_STATUS with no new sample")
	}
}

func BenchmarkSenseThroughTwin(b *testing.B) {
	chip := twinmpu.NewWith(&twinmpu.Options{Seed: 1, Noise: twinmpu.TypicalNoise(1)})
	bus := &twin.I2CBus{}
	bus.Attach(0x68, chip)
	d, err := mpu6050.New(bus, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Sense(); err != nil {
			b.Fatal(err)
		}
	}
}

// The conversation recorded against the twin is the datasheet script: the
// twin answers WHO_AM_I as the chip does and the driver says the same thing
// to both.
func TestRecordedAgainstTwinMatchesScript(t *testing.T) {
	bus := &twin.I2CBus{}
	bus.Attach(0x68, twinmpu.New())
	rec := &i2ctest.Record{Bus: bus}
	if _, err := mpu6050.New(rec, nil); err != nil {
		t.Fatal(err)
	}
	p := &i2ctest.Playback{Ops: rec.Ops()}
	if _, err := mpu6050.New(p, nil); err != nil {
		t.Fatal(err)
	}
	want := initScript(0x68)
	got := rec.Ops()
	if len(got) != len(want) {
		t.Fatalf("recorded %d transactions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() || string(got[i].R) != string(want[i].R) {
			t.Errorf("#%d: recorded %v % x, script %v % x", i, got[i], got[i].R, want[i], want[i].R)
		}
	}
}
