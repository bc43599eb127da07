package bts7960_test

import (
	"math"
	"testing"

	drv "github.com/saint-os/saint/hal/device/bts7960"
	"github.com/saint-os/saint/hal/gpio"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/twin/bts7960"
)

// The tracks board's left bridge: RPWM GPIO12, LPWM GPIO13, both enables
// on GPIO5.
func leftBridge(t *testing.T) (*drv.Bridge, *bts7960.Bridge, *simboard.Board) {
	t.Helper()
	b, err := simboard.New(&simboard.Options{Profile: simboard.Tracks})
	if err != nil {
		t.Fatal(err)
	}
	hw := b.Hardware()
	r, err1 := hw.PWM(12)
	l, err2 := hw.PWM(13)
	en, err3 := hw.GPIO(5)
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := drv.New(drv.Pins{RPWM: r, LPWM: l, REN: en}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d, bts7960.New(b, bts7960.Wiring{RPWM: 12, LPWM: 13, REN: 5, LEN: 5}), b
}

func TestDriverAgainstTwin(t *testing.T) {
	d, tw, _ := leftBridge(t)
	if out := tw.Output(); out.Mode != bts7960.Coast {
		t.Errorf("after New: %+v, want coast", out)
	}
	for _, tc := range []struct {
		do   func() error
		want bts7960.Output
	}{
		{func() error { return d.SetDuty(0.6) }, bts7960.Output{Mode: bts7960.Drive, Duty: 0.6, FreqHz: drv.DefaultFreqHz}},
		{func() error { return d.SetDuty(-0.35) }, bts7960.Output{Mode: bts7960.Drive, Duty: -0.35, FreqHz: drv.DefaultFreqHz}},
		{func() error { return d.SetDuty(-1) }, bts7960.Output{Mode: bts7960.Drive, Duty: -1, FreqHz: drv.DefaultFreqHz}},
		{d.Brake, bts7960.Output{Mode: bts7960.Brake}},
		{d.Coast, bts7960.Output{Mode: bts7960.Coast}},
		{func() error { return d.SetDuty(0) }, bts7960.Output{Mode: bts7960.Brake}},
		{d.Disable, bts7960.Output{Mode: bts7960.Coast}},
	} {
		if err := tc.do(); err != nil {
			t.Fatal(err)
		}
		out := tw.Output()
		if out.Mode != tc.want.Mode || math.Abs(out.Duty-tc.want.Duty) > 1e-12 || out.FreqHz != tc.want.FreqHz {
			t.Errorf("bridge output %+v, want %+v", out, tc.want)
		}
	}
	if tw.Faults() != 0 {
		t.Errorf("the driver caused %d faults", tw.Faults())
	}
}

// Both inputs on (a broken driver) latches a fault until both enables go
// low, whatever the inputs do meanwhile.
func TestShootThroughFault(t *testing.T) {
	_, tw, b := leftBridge(t)
	hw := b.Hardware()
	r, _ := hw.PWM(12)
	l, _ := hw.PWM(13)
	en, _ := hw.GPIO(5)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(en.Out(gpio.High))
	must(r.PWM(0.5, 20000))
	must(l.PWM(0.5, 20000))
	if out := tw.Output(); out.Mode != bts7960.Fault {
		t.Fatalf("both inputs on: %+v, want fault", out)
	}
	must(l.Halt())
	if out := tw.Output(); out.Mode != bts7960.Fault {
		t.Errorf("fault cleared without the enables going low: %+v", out)
	}
	must(en.Out(gpio.Low))
	if out := tw.Output(); out.Mode != bts7960.Coast {
		t.Errorf("after the reset: %+v, want coast", out)
	}
	must(en.Out(gpio.High))
	if out := tw.Output(); out.Mode != bts7960.Drive || out.Duty != 0.5 {
		t.Errorf("driving again: %+v", out)
	}
	if tw.Faults() != 1 {
		t.Errorf("Faults() = %d, want 1", tw.Faults())
	}
}

// Half enabled: one half-bridge floats, so no current path drives the
// motor.
func TestHalfEnabledCoasts(t *testing.T) {
	b, err := simboard.New(&simboard.Options{Profile: simboard.Tracks})
	if err != nil {
		t.Fatal(err)
	}
	hw := b.Hardware()
	r, _ := hw.PWM(12)
	en, _ := hw.GPIO(5)
	_ = r.PWM(0.7, 1000)
	_ = en.Out(gpio.High)
	lenPin, _ := hw.GPIO(6)
	_ = lenPin.Out(gpio.Low)
	tw := bts7960.New(b, bts7960.Wiring{RPWM: 12, LPWM: 13, REN: 5, LEN: 6})
	if out := tw.Output(); out.Mode != bts7960.Coast {
		t.Errorf("L_EN low: %+v, want coast", out)
	}
}

type fakePins struct {
	duty [2]float64
	on   [2]bool
	en   [2]bool
}

func (p *fakePins) PWMState(bcm int) (float64, float64, bool) { return 1000, p.duty[bcm], p.on[bcm] }
func (p *fakePins) Level(bcm int) (gpio.Level, error)         { return gpio.Level(p.en[bcm-2]), nil }

// FuzzOutput sets the pins to anything a board could report (and worse):
// the twin never panics and its duty stays within −1…1.
func FuzzOutput(f *testing.F) {
	f.Add(0.5, 0.0, true, false, true, true)
	f.Add(0.5, 0.5, true, true, true, true)
	f.Add(math.Inf(1), math.NaN(), true, true, true, false)
	f.Fuzz(func(t *testing.T, dr, dl float64, onR, onL, enR, enL bool) {
		p := &fakePins{duty: [2]float64{dr, dl}, on: [2]bool{onR, onL}, en: [2]bool{enR, enL}}
		tw := bts7960.New(p, bts7960.Wiring{RPWM: 0, LPWM: 1, REN: 2, LEN: 3})
		out := tw.Output()
		if !(out.Duty >= -1 && out.Duty <= 1) {
			t.Fatalf("duty %v", out.Duty)
		}
		if out.Mode != bts7960.Drive && out.Duty != 0 {
			t.Fatalf("%v with duty %v", out.Mode, out.Duty)
		}
	})
}
