//go:build cgo

package mujoco

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/pendulum"
)

// TestPendulum releases the pendulum from an angle and drives it with a
// torque profile (a step, then a sine), in both simulators.
func TestPendulum(t *testing.T) {
	cases := []struct {
		name       string
		params     pendulum.Params
		theta0     float64
		torque     func(t float64) float64
		tolerance  float64 // rad RMS over the run
		durationS  float64
		plotTraces bool
	}{
		{"pendulum_free", pendulum.Default(), 1, func(float64) float64 { return 0 }, 1e-3, 5, true},
		{"pendulum_damped_driven", pendulum.Params{Length: 0.5, Mass: 2, Gravity: pendulum.StandardGravity, Damping: 0.3}, 0.2,
			func(t float64) float64 {
				switch {
				case t < 1:
					return 0
				case t < 2.5:
					return 4
				default:
					return 6 * math.Sin(2*math.Pi*0.8*t)
				}
			}, 1e-3, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pd := pendulum.New(c.params)
			pd.Set(c.theta0, 0)
			mj := load(t, pd.MJCF(worldStep/oracleSubsteps))
			mj.Qpos()[0] = c.theta0
			mj.Forward()
			angle := &trace{name: "angle", unit: "rad", scale: 180 / math.Pi, plotUnit: "angle (°)"}
			n := int(c.durationS / worldStep)
			for k := 0; k < n; k++ {
				tau := c.torque(float64(k) * worldStep)
				pd.SetTorque(tau)
				pd.Step(worldStep)
				mj.QfrcApplied()[0] = tau
				for i := 0; i < oracleSubsteps; i++ {
					mj.Step()
				}
				angle.add(float64(k+1)*worldStep, pd.Angle(), mj.Qpos()[0])
			}
			angle.check(t, c.tolerance)
			plotTraces(t, c.name, []*trace{angle})
		})
	}
}
