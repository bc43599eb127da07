package tracks

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/bts7960"
	"github.com/saint-os/saint/hal/device/encoder"
	"github.com/saint-os/saint/hal/device/ina219"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/roles/power"
	"github.com/saint-os/saint/roles/rolekit"
)

// Tracks is the tracks role: differential drive of two
// tracks from cmd_vel, each track's speed closed on its encoder, odometry
// from the encoders, TrackState, the supply current, a latched emergency
// stop and the supply's low-voltage cutoff.
//
// Every control period it measures each track's speed from its encoder,
// ramps the commanded body velocity (v, ω) within the acceleration limits
// towards the last cmd_vel (or to zero once cmd_timeout_ms has passed
// without one), turns it into track speeds, ramps those too (rampTracks:
// the turn slip must not jerk the base) and runs each track's speed loop
// (speedLoop) to set its H-bridge duty. An emergency stop or a supply
// cutoff disables both H-bridges at once (the motors coast: no driver
// fault can power them) and drops the command; driving resumes on a fresh
// cmd_vel after the stop is cleared or the supply has recovered.
type Tracks struct {
	rolekit.Kit
	cfg *tracksConfig
	// limits are what cmd_vel is clamped to (and what the role
	// advertises on its limits topic).
	limits  msg.CommandLimits
	bridges [2]*bts7960.Bridge // left, right
	enc     [2]*encoder.Decoder
	loops   [2]speedLoop
	// observers estimate the track speeds from the encoder counts;
	// refObservers see the reference speeds the same way (see control).
	observers    [2]speedObserver
	refObservers [2]speedObserver
	refPos       [2]float64 // the reference's position, counts
	power        *power.Monitor

	target   [2]float64 // commanded v (m/s) and ω (rad/s), within the limits
	cmdAt    time.Time  // when the last cmd_vel came
	haveCmd  bool
	ref      [2]float64       // v and ω on their way to target, within the acceleration limits
	trackRef [2]float64       // left and right track speeds on their way to trackSpeeds(ref), m/s
	speed    [2]float64       // measured track speeds, m/s
	current  [2]float64       // each bridge's supply current, A (0 without motor_current)
	currentS [2]*ina219.Dev   // the per-track current sensors, nil when not fitted
	estop    msg.EStop        // the latched emergency stop, Active while engaged
	cutoff   bool             // the supply is at cutoff
	link     *rolekit.Link    // the server's heartbeat; lost stops the base
	braking  bool             // stopped with the motors shorted until they stand still
	fault    string           // a latched drive fault (see checkStall), "" without
	stalled  [2]time.Duration // how long each track has been driven without turning
	driveErr error            // the last H-bridge error, logged once

	odom tracksOdom

	mw       *motor.Middleware // the tracks' motor middleware (motor.go)
	coasting bool              // a session's ZERO_TORQUE_MODE disabled the bridges
	heldAt   uint64            // mw.Accepted() when the drive was last stopped
	// mwFeedback is the middleware's feedback, reused every period.
	mwFeedback [2]motor.Feedback
}

// tracksOdom is the pose integrated from the encoders.
type tracksOdom struct {
	x, y, yaw float64 // m, m, rad (not wrapped)
	count     [2]int64
}

// Start implements rolekit.Role.
func (t *Tracks) Start(env rolekit.Env) error {
	return t.Begin(env, t.open)
}

func (t *Tracks) open() error {
	env := t.Env
	cfg, err := parseTracksConfig(env.Config)
	if err != nil {
		return err
	}
	t.cfg = cfg
	t.OnStop(t.closeDrive)
	for side, name := range [2]string{"left", "right"} {
		rp, lp, en := t.Pins.PWM(name+"_rpwm"), t.Pins.PWM(name+"_lpwm"), t.Pins.Output(name+"_enable")
		if rp == nil || lp == nil || en == nil {
			return fmt.Errorf("gpio_mapping or pwm_outputs: %s_rpwm, %s_lpwm (pwm) and %s_enable (output) are required", name, name, name)
		}
		freq := t.Pins.Frequency(name + "_rpwm")
		br, err := bts7960.New(bts7960.Pins{RPWM: rp, LPWM: lp, REN: en}, &bts7960.Options{FreqHz: freq})
		if err != nil {
			return fmt.Errorf("%s H-bridge: %w", name, err)
		}
		t.bridges[side] = br

		a, aok := t.Pins.Input(name + "_encoder_a").(encoder.Pin)
		b, bok := t.Pins.Input(name + "_encoder_b").(encoder.Pin)
		if !aok || !bok {
			return fmt.Errorf("gpio_mapping: %s_encoder_a and %s_encoder_b (encoder inputs reporting edges) are required", name, name)
		}
		pull := gpio.Float
		if env.Config.GPIOMapping[name+"_encoder_a"].Pull == "up" {
			pull = gpio.PullUp
		}
		dec, err := encoder.New(a, b, &encoder.Options{CountsPerRev: cfg.Drive.EncoderCPR, Pull: pull})
		if err != nil {
			return fmt.Errorf("%s encoder: %w", name, err)
		}
		t.enc[side] = dec
		t.loops[side] = speedLoop{g: cfg.Speed}
		t.observers[side] = newSpeedObserver(cfg.Drive.SpeedBandwidthHz)
		t.refObservers[side] = newSpeedObserver(cfg.Drive.SpeedBandwidthHz)
	}

	if t.power, err = power.Start(env, t.onCutoff); err != nil {
		return err
	}
	t.OnStop(t.power.Stop)
	t.power.OnReading(t.publishMotorCurrent)
	if err := t.openCurrentSensors(); err != nil {
		return err
	}

	t.limits = msg.CommandLimits{
		Fields: []msg.FieldLimit{
			{Field: "linear", Min: -cfg.maxLinear, Max: cfg.maxLinear},
			{Field: "angular", Min: -cfg.maxAngular, Max: cfg.maxAngular},
		},
		MaxTrackSpeed: cfg.Drive.MaxTrackSpeed, HalfGauge: cfg.Drive.effectiveGauge() / 2, TurnSlip: cfg.Drive.TurnSlip,
	}
	if err := t.openMotors(); err != nil {
		return err
	}
	if err := rolekit.Subscribe(&t.Kit, env.Prefix+"/cmd_vel", bus.QoS{Depth: 1}, t.command); err != nil {
		return err
	}
	t.AdvertiseLimits(t.limits)
	// Every emergency stop message counts: a deep queue so none is dropped.
	if err := rolekit.Subscribe(&t.Kit, env.Prefix+"/estop", bus.QoS{Depth: 64}, t.onEStop); err != nil {
		return err
	}
	if t.link, err = t.WatchLink(cfg.linkTimeout, t.onLinkLost, t.onLinkRestored); err != nil {
		return err
	}
	t.Every(time.Duration(float64(time.Second)/cfg.Drive.ControlRateHz), t.control)
	t.Every(time.Duration(float64(time.Second)/cfg.Odometry.RateHz), t.publishOdometry)
	t.Every(cfg.statePeriod, t.publishState)
	return nil
}

// Stop implements rolekit.Role: the H-bridges are disabled (motors
// coasting) and every pin released.
func (t *Tracks) Stop() { t.StopAll() }

// closeDrive disables the H-bridges and closes the encoders.
func (t *Tracks) closeDrive() {
	for side := range t.bridges {
		if t.bridges[side] != nil {
			_ = t.bridges[side].Disable()
			t.bridges[side] = nil
		}
		if t.enc[side] != nil {
			t.enc[side].Close()
			t.enc[side] = nil
		}
	}
}

// command takes a cmd_vel: Linear.X forward (m/s), Angular.Z
// counter-clockwise (rad/s), each clamped to its limit, then both scaled
// down together if a track would have to run faster than it may.
func (t *Tracks) command(c msg.Twist) {
	if !t.motorsEnabled() {
		return // held stopped; a command from before the release must not move the robot after it
	}
	v, w := c.Linear.X, c.Angular.Z
	if math.IsNaN(v) || math.IsNaN(w) {
		t.Env.Log.Warn("cmd_vel with NaN ignored", "linear", v, "angular", w)
		return
	}
	if err := t.mw.Yield(); err != nil {
		t.Env.Log.Warn("cmd_vel refused", "err", err)
		return
	}
	if t.coasting {
		t.coasting = false
		t.release()
	}
	t.setTarget(v, w)
	t.cmdAt, t.haveCmd = t.Env.Exec.Now(), true
}

// setTarget sets the body velocity to follow, each part clamped to its
// limit, then both scaled down together if a track would have to run
// faster than it may.
func (t *Tracks) setTarget(v, w float64) {
	v, w = t.limits.ClampTwist(v, w)
	t.target = [2]float64{v, w}
}

// onEStop engages the emergency stop on Active and releases it on a
// message with Active false; anything in between changes nothing.
func (t *Tracks) onEStop(e msg.EStop) {
	switch {
	case e.Active && !t.estop.Active:
		t.estop = e
		t.hold()
		t.Env.Log.Warn("emergency stop engaged", "source", e.Source, "reason", e.Reason)
		t.publishState()
	case !e.Active && (t.estop.Active || t.fault != ""):
		t.estop, t.fault = msg.EStop{}, ""
		t.stalled = [2]time.Duration{}
		t.Env.Log.Info("emergency stop released", "source", e.Source)
		t.release()
		t.publishState()
	}
}

// checkStall latches a drive fault when a track does not respond, for
// stall_timeout_ms: driven at 0.1 m/s or more, its encoder reads under a
// quarter of that (jammed, or its encoder lost while the track may well
// be turning), or the speed loop has used all its correction while the
// output had room to spare (its motor dead, or the track held). Either
// way the loop could only push harder. The fault stops the base as an
// emergency stop does and is released the same way.
func (t *Tracks) checkStall(refs [2]float64, dt float64) {
	limit := time.Duration(t.cfg.Speed.StallTimeoutMS) * time.Millisecond
	for side, ref := range refs {
		l := &t.loops[side]
		notTurning := math.Abs(ref) >= 0.1 && math.Abs(t.speed[side]) < math.Abs(ref)/4
		if notTurning || l.corrSat && !l.outSat {
			t.stalled[side] += time.Duration(dt * float64(time.Second))
		} else {
			t.stalled[side] = 0
		}
		if t.stalled[side] >= limit {
			name := [2]string{"left", "right"}[side]
			t.fault = fmt.Sprintf("%s track not responding for %v (driven at %.2f m/s, encoder reads %.2f m/s): jammed, motor dead or encoder lost",
				name, limit, ref, t.speed[side])
			t.hold()
			t.Env.Log.Error("drive fault", "fault", t.fault)
			t.publish(msg.NodeAlertTopic(t.Env.NodeID), msg.ConsoleAlert{Level: msg.AlertError, Message: t.Env.Prefix + ": " + t.fault,
				Source: t.Env.NodeID, Timestamp: float64(t.Env.Exec.Now().UnixNano()) / 1e9})
			t.publishState()
			return
		}
	}
}

// onLinkLost stops the base as an emergency stop does when the server's
// heartbeat has fallen silent: nobody is left to stop it otherwise.
func (t *Tracks) onLinkLost() {
	t.hold()
	t.publishState()
}

// onLinkRestored lifts the link stop; the tracks stay still until a
// fresh cmd_vel.
func (t *Tracks) onLinkRestored() {
	t.release()
	t.publishState()
}

// onCutoff is the power monitor's cutoff callback.
func (t *Tracks) onCutoff(cut bool) {
	if cut == t.cutoff {
		return
	}
	t.cutoff = cut
	if cut {
		t.hold()
	} else {
		t.release()
	}
	t.publishState()
}

// hold stops driving at once and forgets the command: both H-bridges are
// disabled, or with estop_mode brake they short the motors until the
// tracks stand still (see control) and are disabled then.
func (t *Tracks) hold() {
	for side, br := range t.bridges {
		var err error
		if t.cfg.brakeOnStop {
			err = br.Brake()
		} else {
			err = br.Disable()
		}
		if err != nil {
			t.Env.Log.Error("H-bridge stop", "side", side, "err", err)
			_ = br.Disable()
		}
		t.loops[side].reset()
	}
	t.braking = t.cfg.brakeOnStop
	if t.mw != nil {
		t.heldAt = t.mw.Accepted()
	}
	t.target, t.ref, t.trackRef, t.haveCmd = [2]float64{}, [2]float64{}, [2]float64{}, false
	// The reference starts again from rest: its observer must not
	// remember the speed it had when the drive stopped.
	for side := range t.refObservers {
		t.refObservers[side] = newSpeedObserver(t.cfg.Drive.SpeedBandwidthHz)
		t.refPos[side] = 0
	}
	t.stalled = [2]time.Duration{}
}

// release lifts hold when neither the emergency stop nor the cutoff
// remains. The bridges stay coasting until a cmd_vel drives them.
func (t *Tracks) release() {
	if !t.motorsEnabled() {
		return
	}
	t.braking = false
	for _, br := range t.bridges {
		br.Enable()
	}
}

func (t *Tracks) motorsEnabled() bool {
	return !t.estop.Active && !t.cutoff && t.fault == "" && (t.link == nil || !t.link.Lost())
}

// control is one period of the speed loops.
func (t *Tracks) control() {
	now := t.Env.Exec.Now()
	dt := 1 / t.cfg.Drive.ControlRateHz
	mpc := t.cfg.Drive.metresPerCount()
	for side, d := range t.enc {
		// The shaft is somewhere within the count's step; its middle is
		// the unbiased guess.
		t.speed[side] = t.observers[side].update(float64(d.Count())+0.5, dt) * mpc
	}
	t.integrateOdometry()
	if owned := t.middleware(); owned && t.coasting && t.motorsEnabled() {
		return // a session's ZERO_TORQUE_MODE: the bridges are off
	}
	if !t.motorsEnabled() {
		if t.braking && math.Abs(t.speed[0]) < standstill && math.Abs(t.speed[1]) < standstill {
			t.braking = false
			for _, br := range t.bridges {
				_ = br.Disable()
			}
		}
		return
	}

	target := t.target
	if t.haveCmd && now.Sub(t.cmdAt) > t.cfg.cmdTimeout {
		t.haveCmd = false
		// A stream that ended on a stop is the normal way to stop
		// driving; one that ended while moving is worth a warning.
		if target != [2]float64{} {
			t.Env.Log.Warn("cmd_vel timed out while moving; ramping to a stop", "timeout", t.cfg.cmdTimeout)
		}
	}
	if !t.haveCmd {
		target = [2]float64{}
	}
	t.target = target
	t.ref[0] = rampTo(t.ref[0], target[0], t.cfg.maxLinearAccel, dt)
	t.ref[1] = rampTo(t.ref[1], target[1], t.cfg.maxAngularAccel, dt)
	before := t.trackRef
	refs := t.rampTracks(t.trackSpeeds(t.ref), dt)
	accs := [2]float64{(refs[0] - before[0]) / dt, (refs[1] - before[1]) / dt}

	// At rest with nothing to do the bridges brake (both low sides on)
	// rather than let the loop's integral creep against friction.
	idle := target == [2]float64{} && t.ref == [2]float64{} && refs == [2]float64{} &&
		math.Abs(t.speed[0]) < standstill && math.Abs(t.speed[1]) < standstill
	t.checkStall(refs, dt)
	if !t.motorsEnabled() {
		return
	}
	vbat, ok := t.power.Voltage()
	if !ok {
		vbat = 0 // the loop falls back to its nominal voltage
	}
	for side, br := range t.bridges {
		// The loop compares the measured speed with the reference as the
		// observer would report it if the track followed the reference
		// exactly: the observer's lag behind a ramp is then not an error
		// for the integral to wind up on (and overshoot with).
		t.refPos[side] += refs[side] / mpc * dt
		seen := t.refObservers[side].update(t.refPos[side], dt) * mpc
		duty := 0.0
		if idle {
			t.loops[side].reset()
		} else {
			duty = t.loops[side].step(refs[side], accs[side], seen, t.speed[side], vbat, dt)
		}
		if err := br.SetDuty(duty); err != nil {
			if !errors.Is(err, t.driveErr) {
				t.Env.Log.Error("H-bridge", "side", side, "err", err)
			}
			t.driveErr = err
		}
	}
}

// standstill is the track speed below which a track counts as still, m/s.
const standstill = 0.01

// turnRateScale is the turn rate (rad/s) around which the commanded turn
// slip fades in: below it the turning resistance is not yet fully
// developed.
const turnRateScale = 0.05

// trackSpeeds turns a body velocity (v, ω) into left and right track
// speeds, with each track's turn slip added in the direction of the turn.
func (t *Tracks) trackSpeeds(vw [2]float64) [2]float64 {
	d := t.cfg.Drive
	half := d.effectiveGauge()/2*vw[1] + d.TurnSlip*math.Tanh(vw[1]/turnRateScale)
	return [2]float64{vw[0] - half, vw[0] + half}
}

// rampTracks moves the track speed references towards want (left, right;
// m/s) within the acceleration limits and returns them: their mean, the
// body's speed, by at most max_linear_accel·dt, and their difference by at
// most gauge·max_angular_accel·dt, the difference that turns a base whose
// tracks do not slip (the fastest they can turn it) at the limit. The
// ramped (v, ω) alone would not hold the limit: trackSpeeds adds the turn
// slip over the first turnRateScale of a turn, a step in a few ms, and
// widens the gauge by gauge_factor, while a floor that has not yet built
// up its turning resistance (turning slowly, the tracks scrub sideways
// with little force) turns the base with all of it. With the difference
// ramped, the reference lags the ramped (v, ω) by
// 2·turn_slip/(gauge·max_angular_accel) (22 ms for 0.018 m/s of slip)
// and, with a gauge_factor above 1, by a part of the turn rate's ramp that
// it makes up once the turn rate is at its target; a stop lags as long.
func (t *Tracks) rampTracks(want [2]float64, dt float64) [2]float64 {
	cur := t.trackRef
	mean := rampTo((cur[0]+cur[1])/2, (want[0]+want[1])/2, t.cfg.maxLinearAccel, dt)
	diff := rampTo(cur[1]-cur[0], want[1]-want[0], t.cfg.Drive.Gauge*t.cfg.maxAngularAccel, dt)
	t.trackRef = [2]float64{mean - diff/2, mean + diff/2}
	return t.trackRef
}

// bodyYawRate is the turn rate of the base whose tracks differ by diff
// (right − left, m/s): the part of the difference that is slip turns
// nothing.
func (t *Tracks) bodyYawRate(diff float64) float64 {
	slip := 2 * t.cfg.Drive.TurnSlip
	return (diff - clamp(diff, -slip, slip)) / t.cfg.Drive.effectiveGauge()
}

// integrateOdometry adds the distance each track moved since the last
// period to the pose: the base turns by the tracks' difference over the
// effective gauge and moves by their mean along the mid-period heading.
func (t *Tracks) integrateOdometry() {
	mpc := t.cfg.Drive.metresPerCount()
	var d [2]float64
	for side, dec := range t.enc {
		c := dec.Count()
		d[side] = float64(c-t.odom.count[side]) * mpc
		t.odom.count[side] = c
	}
	ds := (d[0] + d[1]) / 2
	// The distances are the counts', exact; the slip taken off them is
	// judged from the smooth speed estimates, since a period's count
	// difference is coarser than the slip.
	dyaw := (d[1] - d[0]) / t.cfg.Drive.effectiveGauge()
	if diff := t.speed[1] - t.speed[0]; diff != 0 {
		dt := 1 / t.cfg.Drive.ControlRateHz
		dyaw -= (diff/t.cfg.Drive.effectiveGauge() - t.bodyYawRate(diff)) * dt
	}
	mid := t.odom.yaw + dyaw/2
	t.odom.x += ds * math.Cos(mid)
	t.odom.y += ds * math.Sin(mid)
	t.odom.yaw += dyaw
}

func (t *Tracks) publishOdometry() {
	o := t.cfg.Odometry
	yaw := t.odom.yaw
	m := msg.Odometry{
		Header:       msg.Header{Stamp: msg.TimeOf(t.Env.Exec.Now()), FrameID: o.FrameID},
		ChildFrameID: o.ChildFrameID,
	}
	m.Pose.Pose.Position = msg.Point{X: t.odom.x, Y: t.odom.y}
	m.Pose.Pose.Orientation = msg.Quaternion{Z: math.Sin(yaw / 2), W: math.Cos(yaw / 2)}
	m.Twist.Twist.Linear.X = (t.speed[0] + t.speed[1]) / 2
	m.Twist.Twist.Angular.Z = t.bodyYawRate(t.speed[1] - t.speed[0])
	for i := range 6 {
		m.Pose.Covariance[i*7] = o.PoseCovariance[i]
		m.Twist.Covariance[i*7] = o.TwistCovariance[i]
	}
	t.publish(t.Env.Prefix+"/odom", m)
}

// publishState publishes TrackState. The harness does not wire the
// BTS7960 current sense (IS) pins, so the per-track currents are 0; the
// supply current is on motor_current.
func (t *Tracks) publishState() {
	if t.mw != nil {
		t.mw.PublishState()
	}
	t.publish(t.Env.Prefix+"/state", msg.TrackState{
		LeftVelocity:  float32(t.speed[0]),
		RightVelocity: float32(t.speed[1]),
		LeftCurrent:   float32(t.current[0]),
		RightCurrent:  float32(t.current[1]),
		EStopActive:   t.estop.Active,
		MotorsEnabled: t.motorsEnabled(),
	})
}

// openCurrentSensors opens the INA219 of each track's bridge supply
// (motor_current) and reads them at their rate; without the section the
// per-track currents read 0.
func (t *Tracks) openCurrentSensors() error {
	m := t.cfg.MotorCurrent
	if !m.fitted() {
		return nil
	}
	bus, err := t.Env.Board.Hardware().I2C(m.Bus)
	if err != nil {
		return fmt.Errorf("motor_current: I²C bus %d: %w", m.Bus, err)
	}
	for side, addr := range [2]int{m.LeftAddress, m.RightAddress} {
		dev, err := ina219.New(bus, &ina219.Opts{Addr: uint16(addr), ShuntOhms: m.ShuntOhms, MaxCurrent: m.MaxCurrent})
		if err != nil {
			return fmt.Errorf("motor_current: %s track: %w", [2]string{"left", "right"}[side], err)
		}
		t.currentS[side] = dev
	}
	failing := [2]bool{}
	t.Every(time.Duration(float64(time.Second)/m.RateHz), func() {
		for side, dev := range t.currentS {
			r, err := dev.Sense()
			if err != nil {
				if !failing[side] {
					t.Env.Log.Warn("track current sensor not answering", "side", [2]string{"left", "right"}[side], "err", err)
				}
				failing[side], t.current[side] = true, 0
				continue
			}
			failing[side], t.current[side] = false, r.Current
		}
	})
	return nil
}

// publishMotorCurrent publishes each supply reading as MotorCurrent:
// Total is the battery INA219's current, Left and Right the tracks'
// bridges' (motor_current; 0 when not fitted).
func (t *Tracks) publishMotorCurrent(p msg.PowerState) {
	if !p.Present {
		return
	}
	t.publish(t.Env.Prefix+"/motor_current", msg.MotorCurrent{
		Header: msg.Header{Stamp: p.Header.Stamp, FrameID: t.cfg.Odometry.ChildFrameID},
		Left:   float32(t.current[0]), Right: float32(t.current[1]),
		Total: p.Current,
	})
}

func (t *Tracks) publish(topic string, v any) {
	if err := t.Env.Bus.Publish(topic, v); err != nil {
		t.Env.Log.Warn("publish", "topic", topic, "err", err)
	}
}
