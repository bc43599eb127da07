package control

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/saint-os/saint/sim/model/balance"
)

const deg = math.Pi / 180

func TestAccelPitch(t *testing.T) {
	g := 9.80665
	for _, th := range []float64{-20, -5, 0, 5, 20} {
		a := [3]float64{-g * math.Sin(th*deg), 0, g * math.Cos(th*deg)}
		if got := AccelPitch(a) / deg; math.Abs(got-th) > 1e-9 {
			t.Errorf("pitch of %v° = %v°", th, got)
		}
	}
}

func TestComplementaryFollowsGyroAndForgetsBias(t *testing.T) {
	c := Complementary{Tau: 0.2}
	g := 9.80665
	level := [3]float64{0, 0, g}
	// A constant gyro bias of 0.02 rad/s: the accelerometer holds the
	// estimate near level (bias·Tau = 0.004 rad).
	for i := 0; i < 5000; i++ {
		c.Update(level, [3]float64{0, 0.02, 0}, 0.001)
	}
	if p := c.Pitch(); math.Abs(p-0.004) > 0.0005 {
		t.Errorf("biased level pitch %v rad, want ≈ 0.004", p)
	}
	// A fast rotation of 1 rad/s for 50 ms is followed by the gyro.
	c = Complementary{Tau: 0.5}
	c.Update(level, [3]float64{}, 0.001)
	for i := 0; i < 50; i++ {
		c.Update(level, [3]float64{0, 1, 0}, 0.001)
	}
	if p := c.Pitch(); p < 0.045 || p > 0.05 {
		t.Errorf("after 50 ms at 1 rad/s pitch %v rad, want ≈ 0.05", p)
	}
}

func TestPIDIntegralClamped(t *testing.T) {
	p := PID{Gains: Gains{Kp: 1, Ki: 10, Kd: 2}, IntegralLimit: 3}
	var out float64
	for i := 0; i < 1000; i++ {
		out = p.Update(1, 0.5, 0.01)
	}
	if p.Integral() != 3 || out != 1+3+1 {
		t.Errorf("integral %v output %v, want 3 and 5", p.Integral(), out)
	}
	p.Reset()
	if p.Integral() != 0 || p.Output() != 0 {
		t.Error("Reset kept state")
	}
}

func TestGainsValid(t *testing.T) {
	if !(Gains{1, 0, 0.1}).Valid() || (Gains{-1, 0, 0}).Valid() || (Gains{math.NaN(), 0, 0}).Valid() {
		t.Error("Valid wrong")
	}
}

// The cascade on the balance model itself (noisy IMU, 1 kHz): it recovers
// from a 5° lean and then drives at the speed asked.
func TestBalancerOnModel(t *testing.T) {
	m := balance.New(balance.Default(), rand.New(rand.NewPCG(1, 2)))
	m.SetPitch(5*deg, 0)
	b := NewBalancer(Params{Pitch: Gains{2, 0, 0.15}, SpeedKp: 6, SpeedKi: 0.5, MaxLean: 10, YawKp: 5, MaxCurrent: 40})
	f := Complementary{Tau: 0.5}
	var maxAfter1s float64
	for i := 0; i < 8000; i++ {
		target := 0.0
		if i >= 4000 {
			target = 0.5
		}
		acc, gyr := m.IMU()
		p := f.Update(acc, gyr, 0.001)
		_, v := m.Position()
		o := b.Step(Inputs{Pitch: p, PitchRate: gyr[1], YawRate: gyr[2], Speed: v, Dt: 0.001, TargetSpeed: target})
		m.SetWheelCurrent(balance.Left, o.Left)
		m.SetWheelCurrent(balance.Right, o.Right)
		m.Step(0.001)
		if th, _ := m.Pitch(); i > 1000 && i < 4000 {
			maxAfter1s = math.Max(maxAfter1s, math.Abs(th))
		}
	}
	if m.Fallen() {
		t.Fatal("fell")
	}
	if maxAfter1s > 1*deg {
		t.Errorf("pitch after 1 s up to %.2f°, want within 1°", maxAfter1s/deg)
	}
	if _, v := m.Position(); math.Abs(v-0.5) > 0.1 {
		t.Errorf("speed %.2f m/s, want 0.5 ± 0.1", v)
	}
}
