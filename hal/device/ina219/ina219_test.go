package ina219_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/device/ina219"
	"github.com/saint-os/saint/hal/i2c/i2ctest"
	"github.com/saint-os/saint/sim/twin"
	twinina "github.com/saint-os/saint/sim/twin/ina219"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// The datasheet's programming example (SBOS448G 8.5.1): 0.1 Ω, a current
// LSB of 100 µA for up to 2 A, Cal = 4096; 12 V and 1.5 A.
func TestDatasheetExamplePlayback(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x40, W: []byte{0x00, 0x39, 0x9F}},            // config: 32 V, /8, 12-bit, continuous
		{Addr: 0x40, W: []byte{0x05, 0x10, 0x00}},            // calibration 4096
		{Addr: 0x40, W: []byte{0x02}, R: []byte{0x5D, 0xC2}}, // bus 3000 × 4 mV, CNVR
		{Addr: 0x40, W: []byte{0x01}, R: []byte{0x3A, 0x98}}, // shunt 15000 × 10 µV
		{Addr: 0x40, W: []byte{0x04}, R: []byte{0x3A, 0x98}}, // current 15000 × 100 µA
		{Addr: 0x40, W: []byte{0x03}, R: []byte{0x23, 0x28}}, // power 9000 × 2 mW
	}}
	d, err := ina219.New(bus, &ina219.Opts{MaxCurrent: 2, CurrentLSB: 100e-6})
	if err != nil {
		t.Fatal(err)
	}
	if d.Calibration() != 4096 {
		t.Errorf("Calibration = %d", d.Calibration())
	}
	r, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	near(t, "bus", r.BusVoltage, 12, 1e-9)
	near(t, "shunt", r.ShuntVoltage, 0.15, 1e-9)
	near(t, "current", r.Current, 1.5, 1e-9)
	near(t, "power", r.Power, 18, 1e-9)
	if !r.Ready || r.Overflow {
		t.Errorf("flags ready %v overflow %v", r.Ready, r.Overflow)
	}
}

func TestDefaultConfigIsResetValue(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x41, W: []byte{0x00, 0x39, 0x9F}},
		{Addr: 0x41, W: []byte{0x05, 0x10, 0x62}}, // trunc(4194.3) = 4194
		{Addr: 0x41, W: []byte{0x00, 0x39, 0x98}}, // power down
		{Addr: 0x41, W: []byte{0x00, 0x39, 0x9F}}, // resume
		{Addr: 0x41, W: []byte{0x00, 0x80, 0x00}}, // RST
	}}
	d, err := ina219.New(bus, &ina219.Opts{Addr: 0x41})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{d.PowerDown, d.Resume, d.Reset} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestGainAndRange(t *testing.T) {
	// 0.3 A through 0.1 Ω is 30 mV: PG /1; 16 V range; 11-bit bus, 128 averages on the shunt.
	rec := &i2ctest.Record{}
	if _, err := ina219.New(rec, &ina219.Opts{MaxCurrent: 0.3, Bus16V: true, BusADC: ina219.ADC11Bit, ShuntADC: ina219.ADCAvg128}); err != nil {
		t.Fatal(err)
	}
	cfg := rec.Ops()[0].W
	if got := uint16(cfg[1])<<8 | uint16(cfg[2]); got != 0x0000|0x2<<7|0xF<<3|7 {
		t.Errorf("config = %#04x", got)
	}
}

func TestBadOpts(t *testing.T) {
	for _, o := range []ina219.Opts{
		{ShuntOhms: -1}, {MaxCurrent: math.NaN()}, {MaxCurrent: 10}, // 1 V across 0.1 Ω
		{MaxCurrent: 1e-9}, {BusADC: 0x5}, {ShuntADC: 0x10}, {MaxCurrent: 2, CurrentLSB: 1e-6},
	} {
		if _, err := ina219.New(&i2ctest.Record{}, &o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestNACK(t *testing.T) {
	_, err := ina219.New(&twin.I2CBus{Name: "i2c-1"}, nil)
	var nack *twin.NACKError
	if !errors.As(err, &nack) || !strings.Contains(err.Error(), "0x40") {
		t.Errorf("New on an empty bus = %v", err)
	}
}

func TestAgainstTwin(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch())
	chip := twinina.NewWith(&twinina.Options{Clock: clk})
	bus := &twin.I2CBus{}
	bus.Attach(0x40, chip)
	d, err := ina219.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	chip.Set(11.1, -2.5) // battery charging at 2.5 A
	clk.Advance(2 * time.Millisecond)
	r, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	near(t, "bus", r.BusVoltage, 11.1, 0.004)
	near(t, "shunt", r.ShuntVoltage, -0.25, 10e-6)
	near(t, "current", r.Current, -2.5, d.CurrentLSB())
	near(t, "power", r.Power, 27.75, 0.05)
	if !r.Ready {
		t.Error("CNVR clear 2 ms after configuring at 12 bits")
	}
	// Reading power cleared CNVR; no time has passed.
	if r, _ = d.Sense(); r.Ready {
		t.Error("CNVR set with no conversion since the power read")
	}
	// 4 A through 0.1 Ω is 400 mV: beyond ±320 mV.
	chip.Set(12, 4)
	if r, _ = d.Sense(); !r.Overflow {
		t.Error("OVF clear with the shunt beyond its range")
	}
}

func BenchmarkSenseThroughTwin(b *testing.B) {
	chip := twinina.New(0)
	bus := &twin.I2CBus{}
	bus.Attach(0x40, chip)
	d, err := ina219.New(bus, nil)
	if err != nil {
		b.Fatal(err)
	}
	chip.Set(12, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Sense(); err != nil {
			b.Fatal(err)
		}
	}
}
