package head

import (
	"math"

	"github.com/saint-os/saint/roles/motor"
)

// The head's motors as the motor middleware sees them (roles/motor): the
// pan, tilt and roll hobby servos are motors 1, 2 and 3, in radians, within
// the configured limits. Hobby servos are position servos without
// feedback: POSITION (without gains), KEEP_MODE and ZERO_TORQUE_MODE (the
// pulses stop) are honoured; TORQUE, MIXED, gains and DAMPING_MODE are
// refused; they cannot store a zero, so reset_zero is refused. Their
// feedback is the motion profile's setpoint, what the servo is told.

// headJoints is the head's joint table.
func (h *Head) headJoints() *motor.Joints {
	j := &motor.Joints{Name: "saint_head", DOFs: len(h.axes)}
	for i, a := range h.axes {
		j.JointNames = append(j.JointNames, a.name)
		j.MapIndex = append(j.MapIndex, i+1)
		j.Direction = append(j.Direction, 1)
		j.Lower = append(j.Lower, a.min*math.Pi/180)
		j.Upper = append(j.Upper, a.max*math.Pi/180)
		j.Kp = append(j.Kp, 0)
		j.Kd = append(j.Kd, 0)
		j.URDFOffset = append(j.URDFOffset, 0)
	}
	return j
}

// openMotors serves the head's middleware under the role's prefix.
func (h *Head) openMotors() error {
	mw, err := motor.New(motor.Options{Joints: h.headJoints(), MaxTorque: []float64{1, 1, 1}})
	if err != nil {
		return err
	}
	h.mw, h.fb = mw, make([]motor.Feedback, len(h.axes))
	h.OnStop(mw.Close)
	return mw.Serve(h.Env.Bus, h.Env.Exec, h.Env.Prefix)
}

// middleware lets the middleware decide the axes' goals while it owns
// them: a goal per axis (through the motion profile at max_speed), or no
// pulses. It reports whether it owns them.
func (h *Head) middleware() bool {
	fb := h.fb
	for i, a := range h.axes {
		fb[i] = motor.Feedback{Reachable: true, Position: a.pos * math.Pi / 180, Velocity: a.vel * math.Pi / 180}
	}
	out, owns := h.mw.Update(fb)
	if !owns {
		h.limp = [3]bool{}
		return false
	}
	h.speed = h.cfg.maxSpeed
	h.timedOut = false
	for i := range h.axes {
		a := &h.axes[i]
		h.limp[i] = !out[i].Torque
		if out[i].Torque {
			a.target = a.servo.Clamp(out[i].Position * 180 / math.Pi)
		} else {
			// Limp: the profile stays where the servo was let go.
			a.target, a.vel = a.pos, 0
		}
	}
	return true
}
