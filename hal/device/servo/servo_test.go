package servo_test

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/pca9685"
	"github.com/saint-os/saint/hal/device/servo"
	"github.com/saint-os/saint/hal/pwm/pwmtest"
	"github.com/saint-os/saint/sim/twin"
	twinpca "github.com/saint-os/saint/sim/twin/pca9685"
)

func TestPulseMapping(t *testing.T) {
	pin := pwmtest.NewPin(nil)
	s, err := servo.New(pin, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		angle float64
		pulse time.Duration
	}{{0, 1500 * time.Microsecond}, {90, 2500 * time.Microsecond}, {-90, 500 * time.Microsecond}, {45, 2000 * time.Microsecond}} {
		got, err := s.SetAngle(tc.angle)
		if err != nil || got != tc.angle {
			t.Fatalf("SetAngle(%v) = %v, %v", tc.angle, got, err)
		}
		st := pin.State()
		if st.FreqHz != 50 || st.Pulse() != tc.pulse {
			t.Errorf("%v° drove %v at %v Hz, want %v at 50 Hz", tc.angle, st.Pulse(), st.FreqHz, tc.pulse)
		}
		if a := s.Angle(tc.pulse); math.Abs(a-tc.angle) > 1e-9 {
			t.Errorf("Angle(%v) = %v, want %v", tc.pulse, a, tc.angle)
		}
	}
}

func TestLimitsTrimReversed(t *testing.T) {
	pin := pwmtest.NewPin(nil)
	s, err := servo.New(pin, &servo.Config{MinAngle: -30, MaxAngle: 60, Trim: 10, Reversed: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SetAngle(200)
	if err != nil || got != 60 {
		t.Fatalf("SetAngle(200) = %v, %v; want clamped to 60", got, err)
	}
	// 60 + 10 trim = 70°, reversed: 1500 − 70/180 × 2000 µs.
	want := time.Duration(math.Round(1500e3 - 70.0/180*2000e3))
	if p := pin.State().Pulse(); p != want {
		t.Errorf("pulse %v, want %v", p, want)
	}
	if a := s.Angle(want); math.Abs(a-60) > 1e-4 {
		t.Errorf("Angle(%v) = %v, want 60", want, a)
	}
	if got, _ := s.SetAngle(math.NaN()); got != 15 {
		t.Errorf("SetAngle(NaN) = %v, want the middle of the limits, 15", got)
	}
	if err := s.Halt(); err != nil || pin.State().On {
		t.Errorf("Halt: %v, pin on %v", err, pin.State().On)
	}
	if _, on := s.Commanded(); on {
		t.Error("Commanded says on after Halt")
	}
	pin.Fail(pwmtest.ErrFake)
	if _, err := s.SetAngle(0); err == nil {
		t.Error("SetAngle on a failing pin succeeded")
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []servo.Config{
		{MinPulse: 2000 * time.Microsecond, MaxPulse: 1000 * time.Microsecond},
		{MaxPulse: 25 * time.Millisecond},
		{Range: -10},
		{MinAngle: 10, MaxAngle: -10},
		{Trim: math.Inf(1)},
		{MinAngle: -90, MaxAngle: 90, Trim: 5},
		{FreqHz: math.NaN()},
	} {
		if _, err := servo.New(pwmtest.NewPin(nil), &c); err == nil {
			t.Errorf("New(%+v) succeeded", c)
		}
	}
}

// The same servo code on a PCA9685 channel, through the chip's twin.
func TestOnPCA9685(t *testing.T) {
	chip := twinpca.New()
	bus := &twin.I2CBus{}
	bus.Attach(0x40, chip)
	pca, err := pca9685.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := pca.Channel(7)
	s, err := servo.New(ch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetAngle(-45); err != nil {
		t.Fatal(err)
	}
	// 1000 µs within half a count (2.4 µs at 50 Hz), although the chip
	// runs at 50.03 Hz: the channel keeps the pulse width.
	if p := chip.Pulse(7); (p - 1000*time.Microsecond).Abs() > 2500*time.Nanosecond {
		t.Errorf("pulse on channel 7 = %v, want ≈ 1 ms", p)
	}
}
