package balance

import (
	"math"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/motor"
)

// The balancing base's drive as the motor middleware sees it (roles/motor):
// the left and right wheels are motors 1 and 2, joints "left_wheel" and
// "right_wheel", their angle and speed the wheels' (rad, rad/s, relative
// to the ground: the motor's rate plus the body's pitch rate).
//
// The base keeps its own safety rules: nobody drives its wheels but its
// balancing loop, which turns a wheel torque into a lean and would be
// toppled by one from outside. So the drive is exposed as a speed
// request: VELOCITY is the one mode, and a session's wheel speeds become
// the speed and turn rate the loop follows (the mean of the wheels, their
// difference over the wheel base), in the place of the router's cmd_vel:
// capped by the speed limit and the steer limit, followed only while
// armed, after the Orin's CAN commands, stopped by every fault and the
// emergency stop. TORQUE, MIXED and POSITION are refused (the
// middleware's VELOCITY-only drives), as are KEEP_MODE (a base that keeps
// rolling after its client went quiet) and ZERO_TORQUE_MODE (the base
// would fall: it lets go of its wheels only by disarming). DAMPING_MODE,
// the default, stops it where it is, balancing; after that the RC sticks
// or a cmd_vel take over again.

// middlewareRate is how often the middleware runs (its timeouts and the
// session's request).
const middlewareRate = 50 // Hz

// wheelJoints is the base's joint table.
func wheelJoints() *motor.Joints {
	return &motor.Joints{Name: "saint_balance", DOFs: 2, JointNames: []string{"left_wheel", "right_wheel"},
		MapIndex: []int{1, 2}, Direction: []int{1, 1}, Kp: []float64{0, 0}, Kd: []float64{0, 0}, URDFOffset: []float64{0, 0},
		Lower: []float64{math.Inf(-1), math.Inf(-1)}, Upper: []float64{math.Inf(1), math.Inf(1)}}
}

// openMotors serves the drive's middleware under prefix and runs it.
func (b *Balance) openMotors(prefix string) error {
	mw, err := motor.New(motor.Options{Joints: wheelJoints(), VelocityControlled: true, MaxTorque: []float64{0, 0},
		RefuseBehaviors: map[string]string{msg.BehaviorZeroTorque: "the base would fall: a balancing base lets go of its wheels only by disarming"}})
	if err != nil {
		return err
	}
	b.mw = mw
	b.OnStop(mw.Close)
	if err := mw.Serve(b.Env.Bus, b.ex, prefix); err != nil {
		return err
	}
	b.Every(time.Second/middlewareRate, b.middleware)
	return nil
}

// middleware runs the drive's middleware: while a session holds the
// drive, its wheel speeds are the base's request; when it ends, the base
// stands still and the middleware hands the drive back.
func (b *Balance) middleware() {
	now := b.ex.Now()
	fb := b.mwFeedback[:]
	for side, v := range b.vesc {
		t := v.Telemetry()
		w := t.Status.ERPM/float64(b.cfg.PolePairs)*2*math.Pi/60 + b.pitchRate
		b.wheelAngle[side] += w / middlewareRate
		fb[side] = motor.Feedback{Reachable: !t.Status.At.IsZero() && now.Sub(t.Status.At) <= vescStale,
			Position: b.wheelAngle[side], Velocity: w}
	}
	out, owns := b.mw.Update(fb)
	if !owns {
		return
	}
	r := b.cfg.WheelRadiusM
	l, rt := out[0].Velocity*r, out[1].Velocity*r
	b.busSpeed, b.busYaw, b.busVelAt = (l+rt)/2, (rt-l)/wheelBaseM, now
	if !b.mw.Active() {
		// Released or timed out into DAMPING_MODE: the stop just set
		// stands for the command timeout; then the RC sticks or a cmd_vel
		// drive again.
		_ = b.mw.Yield()
	}
}
