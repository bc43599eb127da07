//go:build cgo

package mujoco

import (
	"fmt"
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/balance"
	"github.com/saint-os/saint/sim/model/geom"
)

// balanceState is what the balancing controller reads: travel, speed,
// pitch, pitch rate.
type balanceState struct{ x, v, pitch, rate float64 }

// balanceTorque is a state-feedback balancing controller (N·m per wheel)
// tracking a travel setpoint; the same function drives both simulators,
// each from its own state.
func balanceTorque(s balanceState, target float64) float64 {
	const kx, kv, kp, kd = 12, 18, 160, 22
	return (kx*(s.x-target) + kv*s.v + kp*s.pitch + kd*s.rate) / 2
}

// balanceProfile is the travel setpoint (m) and the push (N, forward) at
// time t: stand, drive 1 m forward over 2 s and get pushed back while
// accelerating, stop.
func balanceProfile(t float64) (target, push float64) {
	switch {
	case t < 1:
		target = 0
	case t < 3:
		target = (t - 1) / 2
	default:
		target = 1
	}
	if t >= 1.5 && t < 1.7 {
		push = -60
	}
	return target, push
}

// mjPitch is the body's rotation about its y axis from the free joint's
// quaternion (w, x, y, z).
func mjPitch(q []float64) float64 {
	w, x, y, z := q[3], q[4], q[5], q[6]
	return math.Asin(math.Max(-1, math.Min(1, 2*(w*y-z*x))))
}

// TestBalance drives the balancing base through a setpoint ramp and a push
// under the same controller in both simulators; MuJoCo's base is a free
// body whose wheels roll on a floor through friction contacts.
func TestBalance(t *testing.T) {
	slid, _ := runBalance(t, "balance", balance.Default())
	// MuJoCo's wheels grip here; so must the Go model's, or the run would
	// not compare rolling with rolling.
	if slid > 0 {
		t.Errorf("the Go model's wheels slid in %d steps on μ = 1", slid)
	}
}

// TestBalanceLowFriction is the same run on slippery floors, where the
// wheels slide (the Go model's Coulomb contact against MuJoCo's soft
// friction cone): at μ = 0.07 briefly through the push, at μ = 0.06 for
// most of the run, spinning at up to 5 m/s.
func TestBalanceLowFriction(t *testing.T) {
	for _, tc := range []struct {
		name string
		mu   float64
	}{
		{"balance_mu_0.07", 0.07},
		{"balance_mu_0.06", 0.06},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := balance.Default()
			p.Friction = tc.mu
			if slid, _ := runBalance(t, tc.name, p); slid == 0 {
				t.Errorf("the wheels never slid on μ = %g: the case checks nothing", tc.mu)
			}
		})
	}
}

// TestBalancePatch is the same run starting on a wet strip of floor
// (μ = 0.05 from x = −0.2 to 0.3 m, dry beyond): the wheels slide from the
// start of the ramp through the push (spinning up to 1.7 m/s), the base is
// pushed 0.28 m back along the strip, grips again, and drives off the
// strip onto the dry floor. MuJoCo's floor is a row of boxes of the two
// frictions (balance.MJCF).
func TestBalancePatch(t *testing.T) {
	p := balance.Default()
	p.Floor = []balance.Patch{{From: -0.2, To: 0.3, Mu: 0.05}}
	slid, end := runBalance(t, "balance_patch", p)
	if slid == 0 {
		t.Error("the wheels never slid on the patch: the case checks nothing")
	}
	if end <= 0.3 {
		t.Errorf("the base ends at x = %.3f m, still on the strip", end)
	}
}

// TestBalanceBump is the same run over a 2 cm bump (30 cm long, centred
// at x = 0.45 m), which the base reaches as the ramp ends. MuJoCo's bump is
// a height field sampled from the Go model's profile every 5 mm; its
// wheels touch the bump's flank ahead of or behind the axle, where the Go
// model takes the contact under the axle, so the axle's path differs a
// little (the case measures how much that matters).
func TestBalanceBump(t *testing.T) {
	p := balance.Default()
	p.Bumps = []balance.Bump{{At: 0.45, Height: 0.02, Length: 0.3}}
	if _, end := runBalance(t, "balance_bump", p); end <= 0.6 {
		t.Errorf("the base ends at x = %.3f m, not past the bump", end)
	}
}

// runBalance runs the profile for the base p (its floor's friction and
// patches) in both simulators, checks pitch and travel and returns in how
// many steps the Go model's wheels slid and where the Go base ended (m).
func runBalance(t *testing.T, name string, p balance.Params) (slid int, end float64) {
	t.Helper()
	const duration = 5.0
	b := balance.New(p, nil)
	mj := load(t, b.MJCF(worldStep/oracleSubsteps))
	for i, bp := range p.Bumps {
		field := mj.HField(fmt.Sprintf("bump_%d", i))
		if field == nil {
			t.Fatalf("no height field for bump %d in the MJCF", i)
		}
		for c := 0; c < balance.MJCFBumpColumns; c++ {
			v := b.BumpSample(i, c)
			field[c], field[balance.MJCFBumpColumns+c] = v, v
		}
		if bp.Height <= 0 {
			t.Fatalf("bump %d: MuJoCo's model has no dips", i)
		}
	}
	body := mj.BodyID("body")
	if body < 0 {
		t.Fatal("no body named body in the MJCF")
	}
	// The free joint's 7 positions (x, y, z, quaternion), then the wheels.
	const wheelL, wheelR = 6, 7 // dof indices
	pitch := &trace{name: "pitch", unit: "rad", scale: 180 / math.Pi, plotUnit: "pitch (°) / travel (dm) / slip (m/s)"}
	travel := &trace{name: "travel", unit: "m", scale: 10, plotUnit: "travel (dm)"}
	slip := &trace{name: "slip", unit: "m/s", scale: 1, plotUnit: "slip (m/s)"}
	for k := 0; k < int(duration/worldStep); k++ {
		target, push := balanceProfile(float64(k) * worldStep)
		x, v := b.Position()
		th, thd := b.Pitch()
		tau := balanceTorque(balanceState{x, v, th, thd}, target)
		b.SetWheelTorque(balance.Left, tau)
		b.SetWheelTorque(balance.Right, tau)
		b.ApplyForce(geom.Vec3{push, 0, 0})
		b.Step(worldStep)
		if b.Sliding(balance.Left) || b.Sliding(balance.Right) {
			slid++
		}

		q, qv := mj.Qpos(), mj.Qvel()
		mtau := balanceTorque(balanceState{q[0], qv[0], mjPitch(q), qv[4]}, target)
		lim := p.Motor.Kt * p.Motor.MaxCurrent
		mtau = math.Max(-lim, math.Min(lim, mtau))
		mj.XfrcApplied()[6*body] = push
		vb := b.BatteryVoltage()
		for s := 0; s < oracleSubsteps; s++ {
			qv := mj.Qvel()
			f := mj.QfrcApplied()
			for _, w := range []int{wheelL, wheelR} {
				f[w] = motorTorque(p.Motor, mtau, qv[w], vb) - p.WheelFriction*qv[w]
			}
			mj.Step()
		}
		tt := float64(k+1) * worldStep
		bx, _ := b.WorldPosition()
		bth, _ := b.Pitch()
		pitch.add(tt, bth, mjPitch(mj.Qpos()))
		travel.add(tt, bx, mj.Qpos()[0])
		qv = mj.Qvel()
		slip.add(tt, b.Slip(balance.Left), p.WheelRadius*(qv[wheelL]+qv[4])-qv[0])
	}
	t.Logf("μ = %g, patches %v: the Go wheels slid in %d of %d steps; largest slip Go %.3g m/s, MuJoCo %.3g m/s",
		p.Friction, p.Floor, slid, int(duration/worldStep), maxOf(slip.goVal), maxOf(slip.mjVal))
	pitch.check(t, 0.5*math.Pi/180)
	goD, mjD := travel.goVal[len(travel.goVal)-1], travel.mjVal[len(travel.mjVal)-1]
	rel := math.Abs(goD-mjD) / math.Abs(mjD)
	t.Logf("travel: Go %.4f m, MuJoCo %.4f m, difference %.2f %% (tolerance 2 %%)", goD, mjD, 100*rel)
	if rel > 0.02 || math.IsNaN(rel) {
		t.Errorf("travel differs by %.2f %% from MuJoCo's, tolerance 2 %%", 100*rel)
	}
	plotTraces(t, name, []*trace{pitch, travel, slip})
	return slid, goD
}

// motorTorque is the hub motor's torque for a commanded tau at the
// wheel's speed w relative to the body: the current the pack's voltage vb
// can push against the back-EMF, as the Go model's current mode.
func motorTorque(m balance.Motor, tau, w, vb float64) float64 {
	lo, hi := m.Kt*(-vb-m.Ke*w)/m.R, m.Kt*(vb-m.Ke*w)/m.R
	return math.Max(lo, math.Min(hi, tau))
}

// maxOf is the largest magnitude in v.
func maxOf(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
