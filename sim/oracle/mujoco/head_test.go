//go:build cgo

package mujoco

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/head"
	"github.com/saint-os/saint/sim/model/servo"
)

// headMotion is a profile inside the axes' travel (µs per axis at time
// t): steps, then sines of different frequencies on the three axes.
func headMotion(t float64) [3]float64 {
	switch {
	case t < 0.2:
		return [3]float64{1500, 1500, 1500}
	case t < 1.5:
		return [3]float64{2000, 1700, 1300}
	default:
		w := 2 * math.Pi * t
		return [3]float64{1500 + 700*math.Sin(0.5*w), 1500 + 350*math.Sin(0.7*w), 1500 + 450*math.Sin(1.1*w)}
	}
}

// headLimits commands every axis to its end of travel (the roll beyond the
// pulse range) at once, so the axes run into their hard stops, and back.
func headLimits(t float64) [3]float64 {
	switch {
	case t < 0.2:
		return [3]float64{1500, 1500, 1500}
	case t < 2.5:
		return [3]float64{500, 2500, 2700}
	default:
		return [3]float64{1800, 1300, 1500}
	}
}

// TestHead drives the head's three servos with the same pulses in both
// simulators; MuJoCo's joints get the servos' drive and friction from
// shadow servos fed MuJoCo's own angles and rates.
func TestHead(t *testing.T) {
	cases := []struct {
		name      string
		pulses    func(t float64) [3]float64
		tolerance float64 // rad RMS per axis over 5 s
	}{
		{"head_motion", headMotion, 1e-3},
		// The axes hit their stops at up to 7.5 rad/s. The Go model's stops
		// are inelastic impacts (rigid.Chain.Stop); MuJoCo's joint limits
		// are soft constraints, overdamped in the MJCF so that they are
		// inelastic too (rigid.Chain.MJCFBodies).
		{"head_limits", headLimits, 1e-3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { compareHead(t, c.name, c.pulses, c.tolerance) })
	}
}

func compareHead(t *testing.T, name string, pulsesAt func(float64) [3]float64, tolerance float64) {
	const duration = 5.0
	h := head.New(head.Default(), nil)
	p := head.Default()
	mj := load(t, h.MJCF(worldStep/oracleSubsteps))
	var shadow [3]*servo.Servo
	for i := range shadow {
		shadow[i] = servo.New(p.Axes[i].Servo)
	}
	names := [3]string{"pan", "tilt", "roll"}
	var traces [3]*trace
	for i := range traces {
		traces[i] = &trace{name: names[i], unit: "rad", scale: 180 / math.Pi, plotUnit: "angle (°)"}
	}
	for k := 0; k < int(duration/worldStep); k++ {
		pulses := pulsesAt(float64(k) * worldStep)
		for i := range pulses {
			h.Servo(i).SetPulse(pulses[i])
			shadow[i].SetPulse(pulses[i])
		}
		h.Step(worldStep)
		for s := 0; s < oracleSubsteps; s++ {
			q, v, f := mj.Qpos(), mj.Qvel(), mj.QfrcApplied()
			for i := range shadow {
				f[i] = shadow[i].DriveTorque(q[i], v[i]) - p.Axes[i].Friction*v[i]
			}
			mj.Step()
		}
		for i := range traces {
			traces[i].add(float64(k+1)*worldStep, h.Angles()[i], mj.Qpos()[i])
		}
	}
	for _, tr := range traces {
		tr.check(t, tolerance)
	}
	plotTraces(t, name, traces[:])
}
