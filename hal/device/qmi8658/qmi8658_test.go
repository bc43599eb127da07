package qmi8658_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/qmi8658"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/spi/spitest"
	"github.com/saint-os/saint/sim/twin"
	twinqmi "github.com/saint-os/saint/sim/twin/qmi8658"
)

// The datasheet's start-up: identify, CTRL1 (auto-increment, little-endian,
// INT2 out), revision, CTRL2–CTRL5, then enable in CTRL7.
func initScript() []spitest.IO {
	return []spitest.IO{
		{W: []byte{0x80, 0x00}, R: []byte{0x00, 0x05}}, // WHO_AM_I
		{W: []byte{0x02, 0x50}},                        // CTRL1: ADDR_AI | INT2_EN
		{W: []byte{0x81, 0x00}, R: []byte{0x00, 0x7C}}, // REVISION_ID
		{W: []byte{0x03, 0x13, 0x53, 0x00, 0x00}},      // CTRL2 ±4 g 1 kHz, CTRL3 ±512 °/s 1 kHz, CTRL4, CTRL5 filters off
		{W: []byte{0x09, 0x80}},                        // CTRL8: CTRL9 handshake on STATUSINT
		{W: []byte{0x08, 0x03}},                        // CTRL7: aEN | gEN
	}
}

func TestNewAndSensePlayback(t *testing.T) {
	ops := append(initScript(),
		spitest.IO{W: []byte{0xAE, 0x00}, R: []byte{0x00, 0x03}}, // STATUS0: aDA | gDA
		spitest.IO{W: append([]byte{0xB3}, make([]byte, 14)...), R: []byte{
			0x00,
			0x80, 0x19, // TEMP 0x1980 / 256 = 25.5 °C
			0x00, 0x20, 0x00, 0xE0, 0x00, 0x00, // accel +1 g, -1 g, 0 at 8192 LSB/g
			0x40, 0x00, 0xC0, 0xFF, 0x00, 0x00, // gyro +64, -64 LSB at 64 LSB/(°/s): ±1 °/s
		}},
		// CTRL9 reset FIFO: command, STATUSINT not yet done, done, ACK.
		spitest.IO{W: []byte{0x0A, 0x04}},
		spitest.IO{W: []byte{0xAD, 0x00}, R: []byte{0x00, 0x00}},
		spitest.IO{W: []byte{0xAD, 0x00}, R: []byte{0x00, 0x80}},
		spitest.IO{W: []byte{0x0A, 0x00}},
		spitest.IO{W: []byte{0x60, 0xB0}}, // soft reset
	)
	conn := &spitest.Playback{Ops: ops}
	d, err := qmi8658.New(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Revision() != 0x7C {
		t.Errorf("Revision = %#x", d.Revision())
	}
	if rdy, err := d.DataReady(); err != nil || !rdy {
		t.Fatalf("DataReady = %v, %v", rdy, err)
	}
	s, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Command(qmi8658.CmdResetFIFO); err != nil {
		t.Fatal(err)
	}
	if err := d.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	want := qmi8658.Sample{
		Accel: [3]float64{9.80665, -9.80665, 0},
		Gyro:  [3]float64{math.Pi / 180, -math.Pi / 180, 0},
		TempC: 25.5,
	}
	for i := 0; i < 3; i++ {
		if math.Abs(s.Accel[i]-want.Accel[i]) > 1e-9 || math.Abs(s.Gyro[i]-want.Gyro[i]) > 1e-9 {
			t.Errorf("axis %d: accel %v gyro %v, want %v %v", i, s.Accel[i], s.Gyro[i], want.Accel[i], want.Gyro[i])
		}
	}
	if s.TempC != want.TempC {
		t.Errorf("TempC = %v", s.TempC)
	}
}

func TestNoInterruptDisablesDRDY(t *testing.T) {
	conn := &spitest.Playback{Ops: []spitest.IO{
		{W: []byte{0x80, 0x00}, R: []byte{0x00, 0x05}},
		{W: []byte{0x02, 0x40}}, // CTRL1: ADDR_AI only
		{W: []byte{0x81, 0x00}, R: []byte{0x00, 0x7C}},
		{W: []byte{0x03, 0x3C, 0x70, 0x00, 0x00}}, // ±16 g low-power 128 Hz; ±2048 °/s 8 kHz
		{W: []byte{0x09, 0x80}},
		{W: []byte{0x08, 0x23}}, // CTRL7: DRDY_DIS | gEN | aEN
	}}
	_, err := qmi8658.New(conn, &qmi8658.Opts{
		AccelRange: qmi8658.Accel16G, AccelODR: qmi8658.ODRLowPower128,
		GyroRange: qmi8658.Gyro2048, GyroODR: qmi8658.ODR8000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWrongChipAndBadOpts(t *testing.T) {
	conn := &spitest.Playback{Ops: []spitest.IO{{W: []byte{0x80, 0x00}, R: []byte{0x00, 0xFF}}}}
	_, err := qmi8658.New(conn, nil)
	var we *qmi8658.WhoAmIError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "0xff") || !strings.Contains(err.Error(), "want 0x05") {
		t.Errorf("New on a floating MISO = %v", err)
	}
	for _, o := range []qmi8658.Opts{{AccelRange: 4}, {GyroRange: 8}, {AccelODR: 10}, {GyroODR: 12}} {
		if _, err := qmi8658.New(&spitest.Playback{}, &o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestAgainstTwin(t *testing.T) {
	chip := twinqmi.New()
	d, err := qmi8658.New(chip, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rotated -10° about y (x forward: nose up), turning at 0.5 rad/s about y.
	th := -10 * math.Pi / 180
	chip.SetMotion(twin.Motion{Orientation: [4]float64{math.Cos(th / 2), 0, math.Sin(th / 2), 0}, AngularRate: [3]float64{0, 0.5, 0}})
	chip.SetTemperature(31.25)
	s, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	want := [3]float64{-9.80665 * math.Sin(th), 0, 9.80665 * math.Cos(th)}
	for i := range want {
		if math.Abs(s.Accel[i]-want[i]) > 0.003 {
			t.Errorf("accel[%d] = %v, want %v", i, s.Accel[i], want[i])
		}
	}
	if math.Abs(s.Gyro[1]-0.5) > 0.001 || s.TempC != 31.25 {
		t.Errorf("gyro y %v temp %v", s.Gyro[1], s.TempC)
	}
	if err := d.Command(qmi8658.CmdOnDemandCal); err != nil {
		t.Fatal(err)
	}
	if chip.Reg(twinqmi.RegStatusInt)&0x80 != 0 {
		t.Error("CmdDone still set after the acknowledgement")
	}
}

func TestCommandNeverDone(t *testing.T) {
	ops := []spitest.IO{{W: []byte{0x0A, 0x05}}}
	for i := 0; i < 1000; i++ {
		ops = append(ops, spitest.IO{W: []byte{0xAD, 0x00}, R: []byte{0x00, 0x00}})
	}
	conn := &spitest.Playback{Ops: append(initScript(), ops...)}
	d, err := qmi8658.New(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Command(qmi8658.CmdRequestFIFO); err == nil || !strings.Contains(err.Error(), "0x05 not done") {
		t.Errorf("Command on a chip that never finishes = %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDataReadyOnTwinClock(t *testing.T) {
	ex := executor.NewVirtual()
	chip := twinqmi.NewWith(&twinqmi.Options{Clock: ex.Clock()})
	rises := 0
	var last gpio.Level
	stop := chip.WireInterrupt(ex, func(l gpio.Level) {
		if l && !last {
			rises++
		}
		last = l
	})
	defer stop()
	var d *qmi8658.Dev
	ex.Post(func() {
		var err error
		if d, err = qmi8658.New(chip, nil); err != nil {
			t.Error(err)
		}
	})
	if err := ex.RunFor(t.Context(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// 896.8 Hz: 89 samples in 100 ms.
	if rises != 89 {
		t.Errorf("%d data-ready edges in 100 ms, want 89", rises)
	}
	var rdy, again bool
	ex.Post(func() {
		rdy, _ = d.DataReady()
		_, _ = d.Sense()
		again, _ = d.DataReady()
	})
	_ = ex.RunFor(t.Context(), 0)
	if !rdy || again {
		t.Errorf("STATUS0 before/after reading the data: %v/%v, want true/false", rdy, again)
	}
}

func BenchmarkSenseThroughTwin(b *testing.B) {
	chip := twinqmi.NewWith(&twinqmi.Options{Seed: 1, Noise: twinqmi.TypicalNoise(1)})
	d, err := qmi8658.New(chip, nil)
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

// scriptThenSample plays the init script, then answers every transfer with
// a fixed sample, allocating nothing itself.
type scriptThenSample struct {
	init *spitest.Playback
	n    int
}

func (c *scriptThenSample) Tx(w, r []byte) error {
	if c.n < len(c.init.Ops) {
		c.n++
		return c.init.Tx(w, r)
	}
	for i := range r {
		r[i] = byte(i)
	}
	return nil
}

// TestSenseAllocatesNothing holds the balance loop's IMU read, once a
// millisecond, to no allocation.
func TestSenseAllocatesNothing(t *testing.T) {
	ops := initScript()
	d, err := qmi8658.New(&scriptThenSample{init: &spitest.Playback{Ops: ops}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = d.Sense() }); allocs != 0 {
		t.Errorf("Sense allocates %.1f times per read, want 0", allocs)
	}
}
