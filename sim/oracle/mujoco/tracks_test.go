//go:build cgo

package mujoco

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/battery"
	"github.com/saint-os/saint/sim/model/tracks"
)

// squareDuty is the tracked base's open-loop drive (left, right duty) at
// time t: four times ahead for 1.5 s and turning left in place for 0.7 s
// (about 90°), then stopped.
func squareDuty(t float64) (left, right float64) {
	switch {
	case t >= 4*2.2:
		return 0, 0
	case math.Mod(t, 2.2) < 1.5:
		return 0.5, 0.5
	}
	return -0.4, 0.4
}

// TestTracks drives the tracked base round a square in both simulators:
// MuJoCo integrates the planar body and the motor shafts under the model's
// own ground laws (tracks.Params.Traction, …) and DC motor equations,
// applied as generalised forces from MuJoCo's state.
func TestTracks(t *testing.T) {
	const duration = 10.0
	tr := tracks.New(tracks.Default())
	p := tr.Params()
	mj := load(t, tr.MJCF(worldStep/oracleSubsteps))
	if mj.Nv() != 5 {
		t.Fatalf("MuJoCo tracks have %d degrees of freedom, want 5", mj.Nv())
	}
	bat := battery.New(p.Battery)
	var amps [2]float64 // the MuJoCo side's motor currents
	h := worldStep / oracleSubsteps
	m := p.Motor
	xs := &trace{name: "x", unit: "m", scale: 1, plotUnit: "position (m) / heading (rad)"}
	ys := &trace{name: "y", unit: "m", scale: 1}
	heading := &trace{name: "heading", unit: "rad", scale: 1}
	var travel [2]*trace
	travel[0] = &trace{name: "left track", unit: "m", scale: 1}
	travel[1] = &trace{name: "right track", unit: "m", scale: 1}
	var path float64
	for k := 0; k < int(duration/worldStep); k++ {
		dl, dr := squareDuty(float64(k) * worldStep)
		duty := [2]float64{dl, dr}
		tr.SetDrive(tracks.Left, dl, true)
		tr.SetDrive(tracks.Right, dr, true)
		tr.Step(worldStep)
		for s := 0; s < oracleSubsteps; s++ {
			q, v, f := mj.Qpos(), mj.Qvel(), mj.QfrcApplied()
			sin, cos := math.Sincos(q[2])
			vf, vs := cos*v[0]+sin*v[1], -sin*v[0]+cos*v[1] // body frame
			half := [2]float64{-p.Gauge / 2, p.Gauge / 2}
			var force [2]float64
			ib := p.QuiescentA + duty[0]*amps[0] + duty[1]*amps[1]
			vt := bat.Terminal(ib)
			for side := 0; side < 2; side++ {
				w := v[3+side]
				slip := w/p.GearRatio*p.SprocketRadius - (vf + half[side]*v[2])
				force[side] = p.Traction(slip)
				f[3+side] = m.Kt*amps[side] - m.B*w - force[side]*p.SprocketRadius/p.GearRatio
			}
			fx := force[0] + force[1] - p.Rolling(vf)
			fy := -p.Lateral(vs)
			f[0], f[1] = cos*fx-sin*fy, sin*fx+cos*fy
			f[2] = (force[1]-force[0])*p.Gauge/2 - p.TurnResistance(v[2])
			mj.Step()
			// The windings over the substep, the shaft's speed held: the
			// exact solution of L·di/dt = V − R·i − Kₑ·ω.
			decay := math.Exp(-h * m.R / m.L)
			for side := 0; side < 2; side++ {
				final := (duty[side]*vt - m.Ke*mj.Qvel()[3+side]) / m.R
				amps[side] = final + (amps[side]-final)*decay
			}
			bat.Draw(ib, h)
		}
		gx, gy, gh := tr.Pose()
		q := mj.Qpos()
		tt := float64(k+1) * worldStep
		if n := len(xs.goVal); n > 0 {
			path += math.Hypot(gx-xs.goVal[n-1], gy-ys.goVal[n-1])
		}
		xs.add(tt, gx, q[0])
		ys.add(tt, gy, q[1])
		heading.add(tt, gh, q[2])
		for side := 0; side < 2; side++ {
			travel[side].add(tt, tr.TrackTravel(side), q[3+side]/p.GearRatio*p.SprocketRadius)
		}
	}
	// Odometry: each track's travel, and the base's position against the
	// path driven, within 2 %.
	for _, c := range []*trace{travel[0], travel[1]} {
		goD, mjD := c.goVal[len(c.goVal)-1], c.mjVal[len(c.mjVal)-1]
		rel := math.Abs(goD-mjD) / math.Abs(mjD)
		t.Logf("%s: Go %.4f m, MuJoCo %.4f m, %.3g %% apart (tolerance 2 %%)", c.name, goD, mjD, 100*rel)
		if !(rel <= 0.02) {
			t.Errorf("%s travel %.2f %% from MuJoCo's, tolerance 2 %%", c.name, 100*rel)
		}
	}
	var worstPos float64
	for i := range xs.goVal {
		worstPos = math.Max(worstPos, math.Hypot(xs.goVal[i]-xs.mjVal[i], ys.goVal[i]-ys.mjVal[i]))
	}
	t.Logf("position: largest difference %.3g m over a %.3f m path (%.3g %%), heading RMS %.3g rad",
		worstPos, path, 100*worstPos/path, heading.rms())
	if !(worstPos <= 0.02*path) {
		t.Errorf("position differs by up to %.3g m, more than 2 %% of the %.3f m path", worstPos, path)
	}
	heading.check(t, 0.02)
	plotTraces(t, "tracks", []*trace{xs, ys, heading})
}
