package servo

import (
	"math"
	"testing"
)

// No PWM a driver can produce, sensible or not, makes the servo's state
// non-finite or leaves it outside its stops.
func FuzzPWM(f *testing.F) {
	f.Add(50.0, 0.075, true, 1500.0, 0.001)
	f.Add(0.0, 2.0, true, -1.0, -1.0)
	f.Add(math.Inf(1), math.NaN(), true, math.Inf(-1), math.NaN())
	f.Add(400.0, 1.0, false, 3000.0, 1e9)
	f.Fuzz(func(t *testing.T, freq, duty float64, on bool, us, dt float64) {
		s := New(MG996R())
		s.SetPWM(freq, duty, on)
		s.Step(dt, 1e-3, 0, 0)
		s.SetPulse(us)
		for i := 0; i < 20; i++ {
			s.Step(1e-3, 1e-3, 0.01, -0.1)
		}
		lo, hi := s.Limits()
		if a := s.Angle(); !(a >= lo && a <= hi) || math.IsNaN(s.Rate()) || math.IsNaN(s.Torque()) {
			t.Errorf("PWM %v Hz %v duty %v, pulse %v µs, dt %v: angle %v rate %v torque %v", freq, duty, on, us, dt, a, s.Rate(), s.Torque())
		}
	})
}
