package bts7960

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	"github.com/saint-os/saint/hal/pwm/pwmtest"
)

// recorder logs every pin operation, across pins, in order: the script a
// driver test compares with, as a scripted I²C conversation would be.
type recorder struct{ log []string }

type recPWM struct {
	*pwmtest.Pin
	name string
	r    *recorder
}

func (p recPWM) PWM(d, f float64) error {
	p.r.log = append(p.r.log, fmt.Sprintf("%s pwm %.2f@%.0f", p.name, d, f))
	return p.Pin.PWM(d, f)
}

func (p recPWM) Halt() error {
	p.r.log = append(p.r.log, p.name+" halt")
	return p.Pin.Halt()
}

type recGPIO struct {
	*gpiotest.Pin
	name string
	r    *recorder
}

func (p recGPIO) Out(l gpio.Level) error {
	p.r.log = append(p.r.log, fmt.Sprintf("%s %v", p.name, l))
	return p.Pin.Out(l)
}

func newRecorded(t *testing.T, tied bool) (*Bridge, *recorder, Pins) {
	t.Helper()
	r := &recorder{}
	p := Pins{
		RPWM: recPWM{pwmtest.NewPin(nil), "R", r},
		LPWM: recPWM{pwmtest.NewPin(nil), "L", r},
		REN:  recGPIO{gpiotest.NewPin(5, nil), "REN", r},
	}
	if !tied {
		p.LEN = recGPIO{gpiotest.NewPin(6, nil), "LEN", r}
	}
	b, err := New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b, r, p
}

func TestPinScript(t *testing.T) {
	for _, tc := range []struct {
		name string
		tied bool
		do   func(b *Bridge) error
		want []string
	}{
		{"power on coasts", false, func(*Bridge) error { return nil },
			[]string{"REN low", "LEN low", "R halt", "L halt"}},
		{"forward enables after the inputs", false, func(b *Bridge) error { return b.SetDuty(0.5) },
			[]string{"L halt", "R pwm 0.50@20000", "REN high", "LEN high"}},
		{"reverse: RPWM low before LPWM rises", true, func(b *Bridge) error {
			if err := b.SetDuty(0.8); err != nil {
				return err
			}
			return b.SetDuty(-0.25)
		}, []string{"L halt", "R pwm 0.80@20000", "REN high", "R halt", "L pwm 0.25@20000"}},
		{"brake keeps the enables", true, func(b *Bridge) error {
			if err := b.SetDuty(-1); err != nil {
				return err
			}
			return b.Brake()
		}, []string{"R halt", "L pwm 1.00@20000", "REN high", "R halt", "L halt"}},
		{"coast drops the enables first", false, func(b *Bridge) error {
			if err := b.SetDuty(0.3); err != nil {
				return err
			}
			return b.Coast()
		}, []string{"L halt", "R pwm 0.30@20000", "REN high", "LEN high", "REN low", "LEN low", "R halt", "L halt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, r, _ := newRecorded(t, tc.tied)
			if tc.name != "power on coasts" {
				r.log = nil
			}
			if err := tc.do(b); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.log, tc.want) {
				t.Errorf("pins did\n  %q\nwant\n  %q", r.log, tc.want)
			}
		})
	}
}

func TestDisable(t *testing.T) {
	b, r, p := newRecorded(t, true)
	if err := b.SetDuty(0.4); err != nil {
		t.Fatal(err)
	}
	if err := b.Disable(); err != nil {
		t.Fatal(err)
	}
	r.log = nil
	if err := b.SetDuty(0.4); !errors.Is(err, ErrDisabled) {
		t.Errorf("SetDuty after Disable = %v, want ErrDisabled", err)
	}
	if err := b.Brake(); !errors.Is(err, ErrDisabled) {
		t.Errorf("Brake after Disable = %v, want ErrDisabled", err)
	}
	if len(r.log) != 0 {
		t.Errorf("a disabled bridge touched its pins: %q", r.log)
	}
	if p.REN.Read() != gpio.Low || p.RPWM.(recPWM).State().On {
		t.Error("Disable left the bridge enabled or driven")
	}
	b.Enable()
	if err := b.SetDuty(-0.2); err != nil || b.Duty() != -0.2 {
		t.Errorf("SetDuty after Enable = %v, duty %v", err, b.Duty())
	}
}

func TestBadInput(t *testing.T) {
	b, r, _ := newRecorded(t, true)
	r.log = nil
	for _, d := range []float64{1.01, -2, nan()} {
		if err := b.SetDuty(d); err == nil {
			t.Errorf("SetDuty(%v) accepted", d)
		}
	}
	if len(r.log) != 0 {
		t.Errorf("rejected duties reached the pins: %q", r.log)
	}
	if _, err := New(Pins{}, nil); err == nil {
		t.Error("New without pins succeeded")
	}
	if _, err := New(Pins{RPWM: pwmtest.NewPin(nil), LPWM: pwmtest.NewPin(nil), REN: gpiotest.NewPin(1, nil)}, &Options{FreqHz: -5}); err == nil {
		t.Error("New accepted −5 Hz")
	}
	rp := pwmtest.NewPin(nil)
	br, err := New(Pins{RPWM: rp, LPWM: pwmtest.NewPin(nil), REN: gpiotest.NewPin(1, nil)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp.Fail(pwmtest.ErrFake)
	if err := br.SetDuty(0.5); !errors.Is(err, pwmtest.ErrFake) {
		t.Errorf("SetDuty with a failing pin = %v", err)
	}
}

func nan() float64 { return math.NaN() }
