package tracks

import (
	"math"

	"github.com/saint-os/saint/roles/motor"
)

// The tracks' motors as the motor middleware sees them (roles/motor): the
// left and right track drives are motors 1 and 2, joints "left_track" and
// "right_track", whose angle is the drive sprocket's (rad, from the
// encoder) and whose speed is the sprocket's (rad/s; × metres per
// revolution / 2π is the track's speed). They are speed-controlled drives:
// VELOCITY is their one mode. A session's velocities become the body
// velocity the tracks follow (v the tracks' mean, ω their difference over
// the effective gauge, before the turn slip the role adds), through the
// same limits, acceleration ramps, speed loops, stall check, emergency
// stop and cutoff as a cmd_vel. On release or timeout DAMPING_MODE (the
// default) ramps them to a stop and ZERO_TORQUE_MODE lets them coast
// (H-bridges disabled); KEEP_MODE is refused. The drives cannot store a
// zero: reset_zero is refused.

// trackJoints is the tracks' joint table.
func trackJoints() *motor.Joints {
	j := &motor.Joints{Name: "saint_tracks", DOFs: 2, JointNames: []string{"left_track", "right_track"},
		MapIndex: []int{1, 2}, Direction: []int{1, 1}, Kp: []float64{0, 0}, Kd: []float64{0, 0}, URDFOffset: []float64{0, 0}}
	// A track turns without end: no position limits.
	j.Lower = []float64{math.Inf(-1), math.Inf(-1)}
	j.Upper = []float64{math.Inf(1), math.Inf(1)}
	return j
}

// openMotors serves the tracks' middleware under the role's prefix.
func (t *Tracks) openMotors() error {
	mw, err := motor.New(motor.Options{Joints: trackJoints(), VelocityControlled: true, MaxTorque: []float64{0, 0}})
	if err != nil {
		return err
	}
	t.mw = mw
	t.OnStop(mw.Close)
	return mw.Serve(t.Env.Bus, t.Env.Exec, t.Env.Prefix)
}

// metresPerRadian is a track's travel per radian of its sprocket.
func (t *Tracks) metresPerRadian() float64 {
	return t.cfg.Drive.metresPerCount() * float64(t.cfg.Drive.EncoderCPR) / (2 * math.Pi)
}

// middleware lets the middleware decide the tracks' target while it owns
// them: the session's track speeds as a body velocity, a stop, or
// coasting. It reports whether it owns them.
func (t *Tracks) middleware() bool {
	mpr := t.metresPerRadian()
	fb := t.mwFeedback[:]
	for side, d := range t.enc {
		fb[side] = motor.Feedback{Reachable: true, Position: float64(d.Count()) * 2 * math.Pi / float64(t.cfg.Drive.EncoderCPR), Velocity: t.speed[side] / mpr}
	}
	out, owns := t.mw.Update(fb)
	if !owns {
		if t.coasting {
			// Handed back while coasting (a session under role commands
			// began): the bridges drive again.
			t.coasting = false
			t.release()
		}
		return false
	}
	coast := !out[0].Torque || !out[1].Torque
	if t.mw.Accepted() == t.heldAt {
		// No command since the drive was stopped (emergency stop, cutoff,
		// link, fault): the session's old speeds must not restart it.
		out = []motor.Output{{Torque: true}, {Torque: true}}
	}
	if coast != t.coasting {
		t.coasting = coast
		for _, br := range t.bridges {
			if coast {
				_ = br.Disable()
			} else if t.motorsEnabled() {
				br.Enable()
			}
		}
	}
	if coast {
		t.target, t.ref, t.trackRef, t.haveCmd = [2]float64{}, [2]float64{}, [2]float64{}, false
		for side := range t.loops {
			t.loops[side].reset()
		}
		return true
	}
	l, r := out[0].Velocity*mpr, out[1].Velocity*mpr
	t.setTarget((l+r)/2, (r-l)/t.cfg.Drive.effectiveGauge())
	t.cmdAt, t.haveCmd = t.Env.Exec.Now(), true
	return true
}
