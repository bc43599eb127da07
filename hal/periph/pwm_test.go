package periph

import (
	"errors"
	"strings"
	"testing"

	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/physic"
)

func TestPWMConvertsDutyAndFrequency(t *testing.T) {
	for _, tc := range []struct {
		duty, hz float64
		want     pgpio.Duty
		wantF    physic.Frequency
	}{
		// A 1.5 ms servo pulse at 50 Hz.
		{0.075, 50, 1258291, 50 * physic.Hertz},
		{0, 1000, 0, physic.KiloHertz},
		{1, 25000, pgpio.DutyMax, 25 * physic.KiloHertz},
		{0.5, 0.5, pgpio.DutyHalf, 500 * physic.MilliHertz},
	} {
		fake := &gpiotest.Pin{N: "GPIO18", Num: 18}
		if err := NewPWM(fake, 18).PWM(tc.duty, tc.hz); err != nil {
			t.Fatalf("PWM(%v, %v): %v", tc.duty, tc.hz, err)
		}
		if fake.D != tc.want || fake.F != tc.wantF {
			t.Errorf("PWM(%v, %v) set duty %d, %v; want %d, %v", tc.duty, tc.hz, fake.D, fake.F, tc.want, tc.wantF)
		}
	}
}

func TestPWMRefusesBadSettings(t *testing.T) {
	fake := &gpiotest.Pin{N: "GPIO12", Num: 12}
	w := NewPWM(fake, 12)
	for _, tc := range []struct{ duty, hz float64 }{{-0.1, 50}, {1.01, 50}, {0.5, 0}, {0.5, -50}} {
		err := w.PWM(tc.duty, tc.hz)
		if err == nil || !strings.Contains(err.Error(), "GPIO12") {
			t.Errorf("PWM(%v, %v) = %v, want an error naming GPIO12", tc.duty, tc.hz, err)
		}
	}
	if fake.F != 0 {
		t.Errorf("a refused setting reached the pin: %v", fake.F)
	}
}

// noPWM is a line of the GPIO character device, which has no PWM.
type noPWM struct{ gpiotest.Pin }

var errNoPWM = errors.New("PWM() not implemented")

func (*noPWM) PWM(pgpio.Duty, physic.Frequency) error { return errNoPWM }

func TestPWMWrapsDriverErrors(t *testing.T) {
	err := NewPWM(&noPWM{gpiotest.Pin{N: "GPIO17", Num: 17}}, 17).PWM(0.5, 50)
	if !errors.Is(err, errNoPWM) || !strings.Contains(err.Error(), "GPIO17") {
		t.Errorf("PWM on a pin without PWM = %v, want the driver's error, naming GPIO17", err)
	}
}

func TestPWMHaltLeavesThePinLow(t *testing.T) {
	fake := &gpiotest.Pin{N: "GPIO13", Num: 13}
	w := NewPWM(fake, 13)
	if err := w.PWM(0.5, 50); err != nil {
		t.Fatal(err)
	}
	fake.L = pgpio.High
	if err := w.Halt(); err != nil {
		t.Fatal(err)
	}
	if fake.L != pgpio.Low {
		t.Errorf("after Halt the pin is %v, want low", fake.L)
	}
}
