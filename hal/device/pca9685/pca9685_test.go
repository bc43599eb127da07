package pca9685_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/pca9685"
	"github.com/saint-os/saint/hal/i2c/i2ctest"
	"github.com/saint-os/saint/sim/twin"
	twinpca "github.com/saint-os/saint/sim/twin/pca9685"
)

// The datasheet's start-up (7.3.1, 7.3.5): sleep with AI, totem-pole
// outputs, all channels off, PRE_SCALE = round(25 MHz / (4096 × 50)) − 1 =
// 121, wake.
func initScript() []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: 0x40, W: []byte{0x00, 0x31}},                   // MODE1: SLEEP | AI | ALLCALL
		{Addr: 0x40, W: []byte{0x01, 0x04}},                   // MODE2: OUTDRV
		{Addr: 0x40, W: []byte{0xFA, 0x00, 0x00, 0x00, 0x10}}, // ALL_LED full off
		{Addr: 0x40, W: []byte{0xFE, 121}},                    // PRE_SCALE
		{Addr: 0x40, W: []byte{0x00, 0x21}},                   // MODE1: AI | ALLCALL, awake
	}
}

func TestPlayback(t *testing.T) {
	ops := append(initScript(),
		i2ctest.IO{Addr: 0x40, W: []byte{0x0E, 0x00, 0x00, 0x33, 0x01}}, // LED2: 0 → 307 counts ≈ 1.5 ms
		i2ctest.IO{Addr: 0x40, W: []byte{0x42, 0x00, 0x10, 0x00, 0x00}}, // LED15 full on
		i2ctest.IO{Addr: 0x40, W: []byte{0x0A, 0x00, 0x00, 0x00, 0x10}}, // LED1 full off
		i2ctest.IO{Addr: 0x40, W: []byte{0x12, 0x00, 0x01, 0x00, 0x03}}, // LED3 on 256 off 768
		i2ctest.IO{Addr: 0x40, W: []byte{0x0E, 0x00, 0x00, 0x00, 0x08}}, // LED2 50 %
		i2ctest.IO{Addr: 0x40, W: []byte{0xFA, 0x00, 0x00, 0x00, 0x10}}, // all off
		// SetFrequency(200): sleep, PRE_SCALE 30, wake, RESTART.
		i2ctest.IO{Addr: 0x40, W: []byte{0x00, 0x31}},
		i2ctest.IO{Addr: 0x40, W: []byte{0xFE, 30}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x00}, R: []byte{0xB1}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x00, 0x21}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x00, 0xA1}},
		i2ctest.IO{Addr: 0x00, W: []byte{0x06}}, // SWRST
	)
	bus := &i2ctest.Playback{Ops: ops}
	d, err := pca9685.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := d.Frequency(); math.Abs(f-50.0288) > 1e-3 {
		t.Errorf("Frequency = %v", f)
	}
	steps := []func() error{
		func() error { return d.SetPulse(2, 1500*time.Microsecond) },
		func() error { return d.FullOn(15) },
		func() error { return d.FullOff(1) },
		func() error { return d.SetCounts(3, 256, 768) },
		func() error { return d.SetDuty(2, 0.5) },
		d.AllOff,
		func() error { return d.SetFrequency(200) },
		d.Reset,
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPrescaleRounding(t *testing.T) {
	for _, tc := range []struct {
		hz   float64
		want byte
	}{{50, 121}, {60, 101}, {200, 30}, {1000, 5}, {1526, 3}, {24, 253}} {
		got, err := pca9685.Prescale(25e6, tc.hz)
		if err != nil || got != tc.want {
			t.Errorf("Prescale(%v Hz) = %d, %v; want %d", tc.hz, got, err, tc.want)
		}
	}
	for _, hz := range []float64{2000, 20, 0, -5, math.NaN(), math.Inf(1)} {
		if _, err := pca9685.Prescale(25e6, hz); err == nil {
			t.Errorf("Prescale(%v Hz) succeeded", hz)
		}
	}
}

func TestBadInput(t *testing.T) {
	d, err := pca9685.New(&i2ctest.Record{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"channel 16":   d.FullOn(16),
		"channel -1":   d.SetDuty(-1, 0.5),
		"count 4096":   d.SetCounts(0, 0, 4096),
		"duty 1.5":     d.SetDuty(0, 1.5),
		"duty NaN":     d.SetDuty(0, math.NaN()),
		"pulse 30 ms":  d.SetPulse(0, 30*time.Millisecond),
		"pulse -1 µs":  d.SetPulse(0, -time.Microsecond),
		"freq 5000 Hz": d.SetFrequency(5000),
	} {
		if err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := d.Channel(16); err == nil {
		t.Error("Channel(16) accepted")
	}
	if _, err := pca9685.New(&i2ctest.Record{}, &pca9685.Opts{FreqHz: 2000}); err == nil {
		t.Error("New at 2 kHz accepted")
	}
}

func TestNACK(t *testing.T) {
	_, err := pca9685.New(&twin.I2CBus{}, nil)
	var nack *twin.NACKError
	if !errors.As(err, &nack) || !strings.Contains(err.Error(), "0x40") || !strings.Contains(err.Error(), "MODE1") {
		t.Errorf("New on an empty bus = %v", err)
	}
}

func TestAgainstTwin(t *testing.T) {
	chip := twinpca.New()
	bus := &twin.I2CBus{}
	bus.Attach(0x40, chip)
	d, err := pca9685.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(chip.Frequency()-d.Frequency()) > 1e-9 {
		t.Errorf("twin runs at %v Hz, driver thinks %v", chip.Frequency(), d.Frequency())
	}
	if err := d.SetPulse(0, 1500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	ch5, _ := d.Channel(5)
	if err := ch5.PWM(0.1, 50); err != nil {
		t.Fatal(err)
	}
	countTime := time.Duration(float64(time.Second) / d.Frequency() / 4096)
	if p := chip.Pulse(0); (p - 1500*time.Microsecond).Abs() > countTime/2 {
		t.Errorf("channel 0 pulse %v, want 1.5 ms within half a count", p)
	}
	if got := chip.Duty(5); math.Abs(got-0.1) > 1.0/4096 {
		t.Errorf("channel 5 duty %v, want 0.1", got)
	}
	if err := ch5.PWM(0.1, 60); err == nil {
		t.Error("a channel accepted a frequency the chip does not run at")
	}
	// Changing frequency with channels running: the chip must come back.
	if err := d.SetFrequency(60); err != nil {
		t.Fatal(err)
	}
	if chip.Duty(0) == 0 || math.Abs(chip.Frequency()-60) > 0.5 {
		t.Errorf("after SetFrequency(60): duty %v at %v Hz", chip.Duty(0), chip.Frequency())
	}
	if err := ch5.Halt(); err != nil || chip.Duty(5) != 0 {
		t.Errorf("Halt: %v, duty %v", err, chip.Duty(5))
	}
	if err := d.Reset(); err != nil {
		t.Fatal(err)
	}
	if !chip.Asleep() || chip.Duty(0) != 0 {
		t.Error("SWRST did not put the chip back to its power-on state")
	}
}

func BenchmarkSetPulseThroughTwin(b *testing.B) {
	chip := twinpca.New()
	bus := &twin.I2CBus{}
	bus.Attach(0x40, chip)
	d, err := pca9685.New(bus, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := d.SetPulse(3, 1500*time.Microsecond); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRecordedAgainstTwinMatchesScript(t *testing.T) {
	bus := &twin.I2CBus{}
	bus.Attach(0x40, twinpca.New())
	rec := &i2ctest.Record{Bus: bus}
	if _, err := pca9685.New(rec, nil); err != nil {
		t.Fatal(err)
	}
	got, want := rec.Ops(), initScript()
	if len(got) != len(want) {
		t.Fatalf("recorded %d transactions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Errorf("#%d: recorded %v, script %v", i, got[i], want[i])
		}
	}
}

// SafeOff is the one ALL_LED_OFF_H write (datasheet 7.3.3: the full-off bit
// of ALL_LED_OFF_H) and nothing else: no configuration, no read, so it
// works on a chip another process set up, whatever its mode.
func TestSafeOff(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x41, W: []byte{0xFA, 0x00, 0x00, 0x00, 0x10}},
	}}
	if err := pca9685.SafeOff(bus, 0x41); err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	// Against the twin: a chip driving 15 channels ends with none.
	tb := &twin.I2CBus{Name: "i2c-1"}
	chip := twinpca.New()
	tb.Attach(0x40, chip)
	d, err := pca9685.New(tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	for ch := 0; ch < 15; ch++ {
		if err := d.SetDuty(ch, 0.3); err != nil {
			t.Fatal(err)
		}
	}
	if err := pca9685.SafeOff(tb, 0x40); err != nil {
		t.Fatal(err)
	}
	for ch := 0; ch < pca9685.Channels; ch++ {
		if _, duty, on := chip.PWMState(ch); on {
			t.Errorf("channel %d still at duty %v", ch, duty)
		}
	}
	if err := pca9685.SafeOff(tb, 0x47); err == nil || !strings.Contains(err.Error(), "0x47") {
		t.Errorf("no chip at 0x47: %v", err)
	}
}
