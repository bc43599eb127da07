package pwmtest

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
)

func TestRecordsSettings(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	p := NewPin(clk)
	if s := p.State(); s.On || s.Duty != 0 {
		t.Errorf("new pin %+v, want halted", s)
	}
	if err := p.PWM(1.5/20, 50); err != nil {
		t.Fatal(err)
	}
	if got := p.State().Pulse(); got != 1500*time.Microsecond {
		t.Errorf("pulse %v, want 1.5ms", got)
	}
	clk.Advance(time.Second)
	if err := p.Halt(); err != nil {
		t.Fatal(err)
	}
	s := p.State()
	if s.On || s.Duty != 0 || s.FreqHz != 50 || s.Pulse() != 0 {
		t.Errorf("after Halt %+v, want off at 0 duty, 50 Hz kept", s)
	}
	h := p.History()
	if len(h) != 2 || !h[0].On || h[1].On || h[1].Time.Sub(h[0].Time) != time.Second {
		t.Errorf("History() = %+v", h)
	}
}

func TestRejectsBadValues(t *testing.T) {
	p := NewPin(nil)
	for _, tc := range []struct{ duty, freq float64 }{
		{-0.1, 50}, {1.1, 50}, {math.NaN(), 50}, {0.5, 0}, {0.5, -1}, {0.5, math.NaN()}, {0.5, math.Inf(1)},
	} {
		if err := p.PWM(tc.duty, tc.freq); err == nil {
			t.Errorf("PWM(%v, %v) succeeded", tc.duty, tc.freq)
		}
	}
	if len(p.History()) != 0 {
		t.Error("a rejected call was recorded")
	}
}

func TestFail(t *testing.T) {
	p := NewPin(nil)
	p.Fail(ErrFake)
	if err := p.PWM(0.5, 1000); !errors.Is(err, ErrFake) {
		t.Errorf("PWM = %v, want ErrFake", err)
	}
	if err := p.Halt(); !errors.Is(err, ErrFake) {
		t.Errorf("Halt = %v, want ErrFake", err)
	}
	p.Fail(nil)
	if err := p.PWM(0.5, 1000); err != nil || !p.State().On {
		t.Errorf("after Fail(nil): %v, %+v", err, p.State())
	}
}

// With recording off the output still changes, and no history is kept.
func TestPinWithoutRecording(t *testing.T) {
	p := NewPin(nil)
	p.SetRecording(false)
	if err := p.PWM(0.25, 1000); err != nil {
		t.Fatal(err)
	}
	if s := p.State(); !s.On || s.Duty != 0.25 || len(p.History()) != 0 {
		t.Errorf("state %+v, history %d entries", s, len(p.History()))
	}
	p.SetRecording(true)
	_ = p.Halt()
	if h := p.History(); len(h) != 1 || h[0].On {
		t.Errorf("recording back on: history %+v", h)
	}
}
