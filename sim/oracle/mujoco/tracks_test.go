//go:build cgo

package mujoco

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/battery"
	"github.com/saint-os/saint/sim/model/geom"
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

// launchDuty is full duty for 1.5 s from rest, then duty 0 (the bridges
// short the motors, which brake the base).
func launchDuty(t float64) (left, right float64) {
	if t < 1.5 {
		return 1, 1
	}
	return 0, 0
}

// sidePush is the push (N, world frame) of TestTracksSidePush at time t:
// 150 N to the left for 0.5 s, more than the tracks' lateral grip
// (μ_lat·m·g = 98 N), while the base drives ahead.
func sidePush(t float64) geom.Vec3 {
	if t >= 0.8 && t < 1.3 {
		return geom.Vec3{0, 150, 0}
	}
	return geom.Vec3{}
}

// TestTracks drives the tracked base round a square in both simulators.
// MuJoCo's base rides on rollers whose contacts with the floor make the
// ground's forces (tracks.Tracks.MJCF): the traction, the tracks' scrubbing
// while they turn in place and the lateral grip are MuJoCo's friction
// cones, not the Go model's contact patch.
func TestTracks(t *testing.T) {
	runTracks(t, "tracks", tracks.Default(), 10, squareDuty, nil)
}

// TestTracksLaunch starts the base at full duty, where the motors could
// push far harder than the floor grips (the tracks spin ahead of the
// ground at up to 0.7 m/s and traction is μ·m·g), then brakes it with the
// motors.
func TestTracksLaunch(t *testing.T) {
	if slip := runTracks(t, "tracks_launch", tracks.Default(), 3, launchDuty, nil); slip < 0.2 {
		t.Errorf("the tracks slipped at most %.3f m/s: the case does not reach the floor's grip", slip)
	}
}

// TestTracksSidePush pushes the base sideways harder than its tracks grip
// while it drives ahead: it slides sideways and its tracks slip along and
// across at once, sharing one friction cone.
func TestTracksSidePush(t *testing.T) {
	runTracks(t, "tracks_side_push", tracks.Default(), 3, func(t float64) (float64, float64) {
		if t < 2 {
			return 0.5, 0.5
		}
		return 0, 0
	}, sidePush)
}

// runTracks drives both simulators, the Go base p, with duty (left, right)
// and push (world frame) for duration s, checks each track's travel
// (odometry) and the base's position within 2 % of the path driven and
// its heading within 0.02 rad RMS, and returns the
// largest slip of a track against the ground under it in the Go model
// (m/s).
func runTracks(t *testing.T, name string, p tracks.Params, duration float64, duty func(float64) (float64, float64), push func(float64) geom.Vec3) (maxSlip float64) {
	t.Helper()
	tr := tracks.New(p)
	mj := load(t, tr.MJCF(worldStep/oracleSubsteps))
	nv := mj.Nv()
	if want := 4 + 2*2*tracks.ContactPoints + 2; nv != want {
		t.Fatalf("MuJoCo tracks have %d degrees of freedom, want %d", nv, want)
	}
	motor := [2]int{nv - 2, nv - 1}
	// Settle on the suspension before the run (0.2 s).
	for i := 0; i < 2000; i++ {
		mj.Step()
	}
	if q := mj.Qpos(); math.Abs(q[0]) > 1e-6 || math.Abs(q[1]) > 1e-6 || math.Abs(q[2]) > 1e-6 {
		t.Fatalf("MuJoCo's base moved while settling: %.3g", q[:3])
	}
	bat := battery.New(p.Battery)
	var amps [2]float64 // the MuJoCo side's motor currents
	h := worldStep / oracleSubsteps
	m := p.Motor
	xs := &trace{name: "x", unit: "m", scale: 1, plotUnit: "position, travel (m) / heading (rad)"}
	ys := &trace{name: "y", unit: "m", scale: 1}
	heading := &trace{name: "heading", unit: "rad", scale: 1}
	var travel [2]*trace
	travel[0] = &trace{name: "left track", unit: "m", scale: 1}
	travel[1] = &trace{name: "right track", unit: "m", scale: 1}
	var path float64
	body := mj.BodyID("base")
	for k := 0; k < int(duration/worldStep); k++ {
		now := float64(k) * worldStep
		dl, dr := duty(now)
		d := [2]float64{dl, dr}
		tr.SetDrive(tracks.Left, dl, true)
		tr.SetDrive(tracks.Right, dr, true)
		var f geom.Vec3
		if push != nil {
			f = push(now)
		}
		tr.ApplyForce(f)
		tr.Step(worldStep)
		v, _, r := tr.Velocity()
		for side, y := range [2]float64{p.Gauge / 2, -p.Gauge / 2} {
			maxSlip = math.Max(maxSlip, math.Abs(tr.TrackSpeed(side)-(v-r*y)))
		}

		xf := mj.XfrcApplied()
		xf[6*body], xf[6*body+1] = f[0], f[1]
		for s := 0; s < oracleSubsteps; s++ {
			q, v, qf := mj.Qpos(), mj.Qvel(), mj.QfrcApplied()
			sin, cos := math.Sincos(q[2])
			ib := p.QuiescentA + d[0]*amps[0] + d[1]*amps[1]
			vt := bat.Terminal(ib)
			for side, j := range motor {
				qf[j] = m.Kt*amps[side] - m.B*v[j]
			}
			rolling := -p.Rolling(cos*v[0] + sin*v[1])
			qf[0], qf[1] = cos*rolling, sin*rolling
			mj.Step()
			// The windings over the substep, the shaft's speed held: the
			// exact solution of L·di/dt = V − R·i − Kₑ·ω.
			decay := math.Exp(-h * m.R / m.L)
			for side, j := range motor {
				final := (d[side]*vt - m.Ke*mj.Qvel()[j]) / m.R
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
		for side, j := range motor {
			travel[side].add(tt, tr.TrackTravel(side), q[j]/p.GearRatio*p.SprocketRadius)
		}
	}
	// Odometry: each track's travel, and the base's position against the
	// path driven, within 2 %.
	for _, c := range travel {
		goD, mjD := c.goVal[len(c.goVal)-1], c.mjVal[len(c.mjVal)-1]
		rel := math.Abs(goD-mjD) / math.Abs(mjD)
		t.Logf("%s: Go %.4f m, MuJoCo %.4f m, %.3g %% apart (tolerance 2 %%)", c.name, goD, mjD, 100*rel)
		if !(rel <= 0.02) {
			t.Errorf("%s travel %.2f %% from MuJoCo's, tolerance 2 %%", c.name, 100*rel)
		}
	}
	var worstPos, at float64
	for i := range xs.goVal {
		if d := math.Hypot(xs.goVal[i]-xs.mjVal[i], ys.goVal[i]-ys.mjVal[i]); d > worstPos {
			worstPos, at = d, xs.time[i]
		}
	}
	t.Logf("position: largest difference %.3g m at %.2f s over a %.3f m path (%.3g %%); largest slip (Go) %.3f m/s",
		worstPos, at, path, 100*worstPos/path, maxSlip)
	if !(worstPos <= 0.02*path) {
		t.Errorf("position differs by up to %.3g m, more than 2 %% of the %.3f m path", worstPos, path)
	}
	heading.check(t, 0.02)
	plotTraces(t, name, []*trace{xs, ys, heading, travel[0], travel[1]})
	return maxSlip
}
