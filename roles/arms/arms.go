package arms

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/feetech"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/roles/power"
	"github.com/saint-os/saint/roles/rolekit"
)

// Arms is the arms role (instance left or right): five joint servos and a
// gripper servo, Feetech STS on the smart-servo bus (ttyAMA0).
//
// ArmCommand moves the joints along a trajectory time-scaled so that every
// joint arrives together, each within its configured speed × speed_factor;
// GripperCommand opens or closes the gripper with a force limit. ArmState
// and GripperState are published at state_rate_hz from what the servos
// report. A servo that stops answering, or a joint that falls behind its
// setpoint further and further (against a load: a collision; without: a
// joint that does not follow) stops the arm where it is and raises
// error_state until the next command.
//
// The joints are also driven through the motor middleware (roles/motor):
// while a client holds a control session, or the behaviour of its release
// applies, the middleware decides the joints' outputs; an ArmCommand or
// home ends the release behaviour, never a session.
type Arms struct {
	rolekit.Kit
	cfg  *armsConfig
	mw   *motor.Middleware
	fbus *feetech.Bus
	can  *armsCAN // the joints' actuators when they are on CAN, else nil
	ids  []uint8  // joint motor ids in joint order, then the gripper's

	servos []armsServo // per id of ids
	// pollDone takes each servo's poll answer: made at start, so that a
	// poll allocates no closures.
	pollDone []func(feetech.Present, error)

	// Joint setpoints, URDF frame (rad), while the role drives, and their
	// rates (rad/s) this control period.
	target   []float64
	rate     []float64
	traj     *armsTrajectory
	queued   *armsTrajectoryGoal
	holding  bool // the joints hold the setpoints (torque on)
	lag      []float64
	lagCount []int

	// Made at start and reused every control period, so that a period
	// allocates nothing: the feedback handed to the middleware (which
	// copies it), the outputs follow returns, and every joint without
	// torque (never written).
	fb   []motor.Feedback
	out  []motor.Output
	idle []motor.Output
	// This period's sync writes: torque off, torque limits, goals (made
	// at start, one entry per servo at most).
	syncOff, syncLimits, syncGoals []feetech.SyncData

	gripTarget  float64 // 0 closed … 1 open
	gripForce   float64 // N
	gripCommand bool

	errorMessage string
	stopped      bool // a fault stopped the arm; the next command clears it

	// link is the server's heartbeat. While it is lost the arm holds or
	// goes limp (link_loss); limp stays until the next command.
	link *rolekit.Link
	limp bool

	polling int // reads outstanding in this control period
	cycle   uint64

	power     *power.Monitor
	cutoff    bool      // the supply is at cutoff: servos without torque
	overSince time.Time // since when the supply power is above max_power
	over      bool
}

// armsServo is one motor's last report and what it was last told.
type armsServo struct {
	present   feetech.Present // a Feetech servo's report
	reachable bool
	polled    bool // answered at least once
	statusErr uint8
	// The report in the motor's frame, servo or actuator alike: rad, rad/s,
	// N·m, |torque| as a fraction of the maximum, moving; fault is a CAN
	// actuator's error report.
	pos, vel, effort, load float64
	moving                 bool
	fault                  string
	// torqueOn and limit are what the servo was last written.
	torqueOn bool
	limit    int // 0.1 % units; −1 unknown
	// The bytes of the sync writes to this servo, kept here so that a
	// control period builds its packets without allocating.
	offData   [1]byte
	limitData [2]byte
	goalData  [6]byte
}

// armsTrajectoryGoal is a move waiting to start.
type armsTrajectoryGoal struct {
	to    []float64
	speed float64
}

// armsTrajectory is a synchronised move: every joint follows the same
// smooth time scaling s(u) = 3u² − 2u³ from its start to its goal over the
// same duration.
type armsTrajectory struct {
	from, to []float64
	start    time.Time
	dur      time.Duration
}

// at puts the setpoints and rates at now into q and dq (one per joint, not
// the trajectory's own from or to) and returns whether the move is over.
func (t *armsTrajectory) at(now time.Time, q, dq []float64) (done bool) {
	u := 1.0
	if t.dur > 0 {
		u = math.Min(1, now.Sub(t.start).Seconds()/t.dur.Seconds())
	}
	s, ds := 3*u*u-2*u*u*u, 6*u*(1-u)/math.Max(t.dur.Seconds(), 1e-9)
	for i := range t.to {
		d := t.to[i] - t.from[i]
		q[i], dq[i] = t.from[i]+s*d, ds*d
	}
	return u >= 1
}

// armsPeakRate is the peak of ds/du for the time scaling: 1.5.
const armsPeakRate = 1.5

// Start implements rolekit.Role.
func (a *Arms) Start(env rolekit.Env) error {
	cfg, err := parseArmsConfig(env.Config)
	if err != nil {
		return err
	}
	a.cfg = cfg
	return a.Begin(env, func() error {
		if err := a.open(); err != nil {
			return fmt.Errorf("arms: %w", err)
		}
		return nil
	})
}

func (a *Arms) open() error {
	env, cfg := a.Env, a.cfg
	port, err := env.Board.Hardware().UART("ttyAMA0")
	if err != nil {
		return fmt.Errorf("ttyAMA0 (Feetech servo bus): %w", err)
	}
	if a.fbus, err = feetech.New(port, env.Exec, nil); err != nil {
		return fmt.Errorf("servo bus (Feetech, ttyAMA0): %w", err)
	}
	a.OnStop(a.torqueOff)
	j := cfg.joints
	n := len(j.JointNames)
	for _, id := range j.MapIndex {
		a.ids = append(a.ids, uint8(id))
	}
	a.ids = append(a.ids, cfg.Gripper.ID)
	a.servos = make([]armsServo, len(a.ids))
	a.pollDone = make([]func(feetech.Present, error), len(a.ids))
	for i := range a.servos {
		a.servos[i].limit = -1
		a.pollDone[i] = func(p feetech.Present, err error) { a.polled(i, p, err) }
	}
	a.target, a.rate, a.lag, a.lagCount = make([]float64, n), make([]float64, n), make([]float64, n), make([]int, n)
	a.fb, a.out, a.idle = make([]motor.Feedback, n), make([]motor.Output, n), make([]motor.Output, n)
	a.syncOff = make([]feetech.SyncData, 0, len(a.ids))
	a.syncLimits = make([]feetech.SyncData, 0, len(a.ids))
	a.syncGoals = make([]feetech.SyncData, 0, len(a.ids))
	a.gripForce = cfg.Gripper.DefaultForceN
	calibrate := a.calibrateZero
	if cfg.Actuators.Bus != "" {
		if err := a.openCAN(); err != nil {
			return err
		}
		calibrate = a.can.Zero
	}
	if a.mw, err = motor.New(motor.Options{
		Joints: j, TorqueControlled: a.can != nil, MaxTorque: cfg.ServoMaxTorqueNM, DampingKd: cfg.DampingKd,
		Calibrate:      calibrate,
		SessionTimeout: time.Duration(cfg.DefaultTimeoutMS) * time.Millisecond,
	}); err != nil {
		return err
	}
	a.OnStop(a.mw.Close)
	if err := a.mw.Serve(env.Bus, env.Exec, env.Prefix); err != nil {
		return err
	}
	if err := a.subscribe(); err != nil {
		return err
	}
	if a.power, err = power.Start(env, func(cut bool) { a.cutoff = cut }); err != nil {
		return err
	}
	a.OnStop(a.power.Stop)
	a.power.OnReading(a.watchPower)
	if a.link, err = a.WatchLink(cfg.linkTimeout, a.onLinkLost, nil); err != nil {
		return err
	}
	a.Every(cfg.controlPeriod, a.poll)
	a.Every(cfg.statePeriod, a.publish)
	a.AdvertiseLimits(a.limits())
	return nil
}

// limits are what move clamps an ArmCommand's target positions to: each
// joint's [lower, upper], in degrees, as the router's joint_i.
func (a *Arms) limits() msg.CommandLimits {
	j := a.cfg.joints
	var l msg.CommandLimits
	for i := range j.JointNames {
		l.Fields = append(l.Fields, msg.FieldLimit{Field: fmt.Sprintf("joint_%d", i),
			Min: j.Lower[i] * 180 / math.Pi, Max: j.Upper[i] * 180 / math.Pi})
	}
	return l
}

func (a *Arms) subscribe() error {
	prefix := a.Env.Prefix
	if err := rolekit.Subscribe(&a.Kit, prefix+"/cmd", bus.QoS{Depth: 4}, a.command); err != nil {
		return err
	}
	if err := rolekit.Subscribe(&a.Kit, prefix+"/gripper/cmd", bus.QoS{Depth: 4}, a.gripper); err != nil {
		return err
	}
	return rolekit.Serve(&a.Kit, prefix+"/"+msg.ArmHome, func(r msg.ArmHomeRequest, reply func(msg.ArmHomeResponse, error)) {
		home := make([]float32, len(a.cfg.HomeDeg))
		for i, d := range a.cfg.HomeDeg {
			home[i] = float32(d)
		}
		if err := a.move(msg.ArmCommand{TargetPositions: home, SpeedFactor: r.SpeedFactor, Immediate: true}); err != nil {
			reply(msg.ArmHomeResponse{Message: err.Error()}, nil)
			return
		}
		reply(msg.ArmHomeResponse{Success: true, Message: "moving home"}, nil)
	})
}

// Stop implements rolekit.Role: the servos lose their torque (as at
// power-on) and the hardware is released.
func (a *Arms) Stop() { a.StopAll() }

// torqueOff turns every servo's torque off and closes the servo bus once
// that write is on the line.
func (a *Arms) torqueOff() {
	if a.fbus == nil {
		return
	}
	var off []feetech.SyncData
	for _, id := range a.ids {
		off = append(off, feetech.SyncData{ID: id, Data: []byte{0}})
	}
	b := a.fbus
	b.SyncWrite(feetech.RegTorqueEnable, off, func(error) { b.Close() })
	a.fbus = nil
}

// command takes an ArmCommand from the bus.
func (a *Arms) command(c msg.ArmCommand) {
	if err := a.move(c); err != nil {
		a.errorMessage = "command refused: " + err.Error()
		a.Env.Log.Warn("arm command refused", "err", err)
	}
}

// onLinkLost stops the arm: the server's heartbeat is silent.
func (a *Arms) onLinkLost() {
	if a.cfg.limpOnLoss {
		a.limp = true
		a.errorMessage = "server link lost: servos without torque until the next command"
		return
	}
	// The next control period holds where the arm is then (follow).
	a.errorMessage = "server link lost: holding"
	a.holding = false
}

// move starts (or queues) a synchronised move to c's targets.
func (a *Arms) move(c msg.ArmCommand) error {
	if a.link != nil && a.link.Lost() {
		return errors.New("server link lost: the arm holds until it returns")
	}
	j := a.cfg.joints
	n := len(j.JointNames)
	if len(c.TargetPositions) == 0 || len(c.TargetPositions) > n {
		return fmt.Errorf("target_positions: %d values, expected 1 to %d (%s)", len(c.TargetPositions), n, strings.Join(j.JointNames, ", "))
	}
	f := float64(c.SpeedFactor)
	switch {
	case math.IsNaN(f) || f < 0 || f > 1:
		return fmt.Errorf("speed_factor: %g, expected 0 to 1", f)
	case f == 0:
		f = a.cfg.DefaultSpeedFactor
	}
	for i, v := range c.TargetPositions {
		if d := float64(v); math.IsNaN(d) || math.IsInf(d, 0) {
			return fmt.Errorf("target_positions[%d]: not a number", i)
		}
	}
	for k := range a.servos[:n] {
		if !a.servos[k].polled {
			return fmt.Errorf("%s: servo %d has not answered yet", j.JointNames[k], a.ids[k])
		}
	}
	if err := a.mw.Yield(); err != nil {
		return err
	}
	if !a.holding {
		a.holdPresent()
	}
	end := a.target
	if a.queued != nil && !c.Immediate {
		end = a.queued.to
	} else if a.traj != nil && !c.Immediate {
		end = a.traj.to
	}
	to := append([]float64(nil), end...)
	for i, v := range c.TargetPositions {
		to[i] = j.Clamp(i, float64(v)*math.Pi/180)
	}
	a.errorMessage, a.stopped, a.limp = "", false, false
	for i := range a.lagCount {
		a.lagCount[i], a.lag[i] = 0, 0
	}
	g := &armsTrajectoryGoal{to: to, speed: f}
	if a.traj != nil && !c.Immediate {
		a.queued = g
		return nil
	}
	a.queued = nil
	a.begin(g)
	return nil
}

// begin starts a move from the present setpoints.
func (a *Arms) begin(g *armsTrajectoryGoal) {
	dur := 0.0
	for i := range g.to {
		v := a.cfg.MaxJointSpeedDPS[i] * math.Pi / 180 * g.speed
		dur = math.Max(dur, armsPeakRate*math.Abs(g.to[i]-a.target[i])/v)
	}
	a.traj = &armsTrajectory{from: append([]float64(nil), a.target...), to: g.to, start: a.Env.Exec.Now(), dur: time.Duration(dur * float64(time.Second))}
}

// holdPresent makes the joints' present positions their setpoints.
func (a *Arms) holdPresent() {
	j := a.cfg.joints
	for i := range a.target {
		a.target[i] = j.ToURDF(i, a.motorAngle(i))
	}
	a.traj, a.queued, a.holding = nil, nil, true
}

// motorAngle is joint i's reported angle, rad from its motor's zero.
func (a *Arms) motorAngle(i int) float64 { return a.servos[i].pos }

// gripper takes a GripperCommand.
func (a *Arms) gripper(c msg.GripperCommand) {
	p, f := float64(c.Position), float64(c.Force)
	if math.IsNaN(p) || math.IsNaN(f) || f < 0 {
		a.errorMessage = fmt.Sprintf("gripper command refused: position %g, force %g (want 0–1 and ≥ 0 N)", p, f)
		return
	}
	if f == 0 {
		f = a.cfg.Gripper.DefaultForceN
	}
	a.gripTarget, a.gripForce, a.gripCommand = math.Max(0, math.Min(1, p)), math.Min(f, a.cfg.Gripper.MaxForceN), true
}

// poll reads every servo's present state; the control step runs once all
// have answered or timed out. A period whose reads are still outstanding
// is skipped.
func (a *Arms) poll() {
	if a.polling > 0 || a.fbus == nil {
		return
	}
	n := len(a.cfg.joints.JointNames)
	first := 0
	if a.can != nil {
		// The actuators answered last period's commands already; only
		// the gripper servo is read.
		a.can.read(a.servos[:n], a.cfg.ServoMaxTorqueNM)
		first = n
	}
	a.polling = len(a.ids) - first
	for k := first; k < len(a.ids); k++ {
		a.fbus.ReadPresent(a.ids[k], a.pollDone[k])
	}
}

// polled takes servo k's answer to a poll; the last answer runs the
// control period.
func (a *Arms) polled(k int, p feetech.Present, err error) {
	if a.fbus == nil {
		// Stopped: a read that was in flight answers (or times out)
		// after Stop. There is no period left to run.
		return
	}
	n := len(a.cfg.joints.JointNames)
	model := a.fbus.Model()
	s := &a.servos[k]
	if err == nil {
		s.present, s.reachable, s.polled, s.statusErr = p, true, true, 0
	} else {
		// Only here: errors.As makes se escape, an allocation a
		// period if it were declared for every answer.
		var se *feetech.StatusError
		if asStatusError(err, &se) {
			s.present, s.reachable, s.polled, s.statusErr = p, true, true, se.Bits
		} else {
			s.reachable = false
		}
	}
	if s.reachable {
		s.pos, s.vel = model.Radians(p.Position), float64(p.Speed)/model.StepsPerRadian()
		s.load, s.moving = math.Abs(float64(p.Load))/1000, p.Moving
		if k < n {
			// The servo reports the load opposing its drive: the
			// torque has the load's opposite sign.
			s.effort = -float64(p.Load) / 1000 * a.cfg.ServoMaxTorqueNM[k]
		}
	}
	if a.polling--; a.polling == 0 {
		a.control()
	}
}

// control runs one control period on fresh feedback.
func (a *Arms) control() {
	if a.fbus == nil {
		return
	}
	a.cycle++
	j := a.cfg.joints
	fb := a.fb
	for i := range fb {
		s := &a.servos[i]
		fb[i] = motor.Feedback{Reachable: s.reachable, Position: s.pos, Velocity: s.vel, Effort: s.effort}
	}
	out, owns := a.mw.Update(fb)
	// Nobody can stop a session's client across a lost link: the role
	// holds the pose the arm had when the link went instead.
	if owns && !a.link.Lost() {
		a.holding, a.traj, a.queued = false, nil, nil
		// The session's client drives; the role still says what it sees.
		for i, f := range fb {
			if !f.Reachable {
				a.errorMessage = fmt.Sprintf("%s: %s %d does not answer", j.JointNames[i], a.motorKind(), a.ids[i])
				break
			}
		}
	} else {
		out = a.follow()
	}
	if a.limp {
		out = a.idle
		a.holding, a.traj, a.queued, a.gripCommand = false, nil, nil, false
		a.gripOff()
	}
	if a.cutoff {
		// The supply is too low to run: every servo without torque, as
		// the power monitor asks of the role's actuators.
		out = a.idle
		a.errorMessage = "supply at cutoff: servos without torque"
		a.holding, a.traj, a.queued, a.gripCommand = false, nil, nil, false
		a.gripOff()
	}
	a.write(out)
}

// gripOff takes the gripper's torque off.
func (a *Arms) gripOff() {
	k := len(a.ids) - 1
	if s := &a.servos[k]; s.torqueOn || s.limit >= 0 {
		s.torqueOn, s.limit = false, -1
		a.fbus.SyncWrite(feetech.RegTorqueEnable, []feetech.SyncData{{ID: a.ids[k], Data: []byte{0}}}, func(error) {})
	}
}

// watchPower enforces the joint table's max_power: the supply's power above
// it for longer than max_power_duration stops the arm where it is.
func (a *Arms) watchPower(ps msg.PowerState) {
	j := a.cfg.joints
	if j.MaxPower <= 0 || !ps.Present {
		a.over = false
		return
	}
	now := a.Env.Exec.Now()
	if float64(ps.Power) <= j.MaxPower {
		a.over = false
		return
	}
	if !a.over {
		a.over, a.overSince = true, now
	}
	if now.Sub(a.overSince).Seconds() >= j.MaxPowerDuration && (a.traj != nil || a.queued != nil) {
		a.errorMessage = fmt.Sprintf("power %.0f W above max_power %.0f W for %.1f s: arm stopped", ps.Power, j.MaxPower, j.MaxPowerDuration)
		a.stopped = true
		a.holdPresent()
	}
}

// follow advances the trajectory, checks the joints, and returns their
// position outputs (nil before the first full poll). The outputs are valid
// until the next call: every control period reuses the same slice, so a
// caller that keeps them longer copies them.
func (a *Arms) follow() []motor.Output {
	j := a.cfg.joints
	for i := range a.target {
		if !a.servos[i].polled {
			return nil
		}
	}
	if !a.holding {
		// The first complete poll: hold where the arm is.
		a.holdPresent()
	}
	rate := a.rate
	clear(rate)
	if a.traj != nil {
		// The trajectory's own from and to are copies, never a.target.
		if done := a.traj.at(a.Env.Exec.Now(), a.target, rate); done {
			a.traj = nil
			if g := a.queued; g != nil {
				a.queued = nil
				a.begin(g)
			}
		}
	}
	if !a.stopped {
		if why := a.fault(); why != "" {
			// Stop once, where the arm is: holding that pose from now on
			// (re-reading it every period would let gravity ratchet the
			// arm down).
			a.errorMessage, a.stopped = why, true
			a.Env.Log.Warn("arm stopped", "reason", why)
			a.holdPresent()
		}
	}
	// A servo tracks the position with its own loop; an actuator with
	// joints.yaml's gains and the trajectory's speed.
	out := a.out
	for i, q := range a.target {
		out[i] = motor.Output{Torque: true, Position: j.ToMotor(i, q), TorqueLimit: 1,
			Velocity: float64(j.Direction[i]) * rate[i], Kp: j.Kp[i], Kd: j.Kd[i]}
	}
	return out
}

// fault returns why the arm must stop, or "" when it may go on: a servo
// that does not answer or reports a fault, or a joint whose lag behind its
// setpoint has grown beyond the threshold for collision.cycles periods.
func (a *Arms) fault() string {
	j := a.cfg.joints
	for i := range a.target {
		s := a.servos[i]
		name := j.JointNames[i]
		if !s.reachable {
			return fmt.Sprintf("%s: %s %d does not answer", name, a.motorKind(), a.ids[i])
		}
		if s.fault != "" {
			return fmt.Sprintf("%s: actuator %d %s", name, a.ids[i], s.fault)
		}
		if s.statusErr&(feetech.ErrOverload|feetech.ErrOverheat|feetech.ErrOverCurrent|feetech.ErrVoltage) != 0 {
			return fmt.Sprintf("%s: servo %d reports error 0x%02x", name, a.ids[i], s.statusErr)
		}
	}
	c := a.cfg.Collision
	for i, q := range a.target {
		lag := math.Abs(q - j.ToURDF(i, a.motorAngle(i)))
		if lag*180/math.Pi < c.TrackingErrorDeg || lag < a.lag[i] {
			a.lagCount[i], a.lag[i] = 0, lag
			continue
		}
		a.lag[i] = lag
		if a.lagCount[i]++; a.lagCount[i] < c.Cycles {
			continue
		}
		load := a.servos[i].load
		if load >= c.Load {
			return fmt.Sprintf("collision: %s blocked %.0f° from its setpoint at %.0f%% load", j.JointNames[i], lag*180/math.Pi, load*100)
		}
		return fmt.Sprintf("%s does not follow: %.0f° from its setpoint at %.0f%% load", j.JointNames[i], lag*180/math.Pi, load*100)
	}
	return ""
}

// write sends the joints' outputs and the gripper's goal to the servos.
func (a *Arms) write(out []motor.Output) {
	if out == nil {
		return
	}
	a.syncOff, a.syncLimits, a.syncGoals = a.syncOff[:0], a.syncLimits[:0], a.syncGoals[:0]
	if a.can != nil {
		a.can.Write(out)
	} else {
		for i, o := range out {
			a.put(i, o.Torque, o.Position, o.TorqueLimit)
		}
	}
	if g := a.cfg.Gripper; a.gripCommand {
		pos := (g.ClosedDeg + a.gripTarget*(g.OpenDeg-g.ClosedDeg)) * math.Pi / 180
		a.put(len(out), true, pos, a.gripForce/g.MaxForceN)
	}
	ignore := func(error) {}
	if len(a.syncOff) > 0 {
		a.fbus.SyncWrite(feetech.RegTorqueEnable, a.syncOff, ignore)
	}
	if len(a.syncLimits) > 0 {
		a.fbus.SyncWrite(armsRegTorqueLimit, a.syncLimits, ignore)
	}
	if len(a.syncGoals) > 0 {
		a.fbus.SyncWrite(feetech.RegGoalPosition, a.syncGoals, ignore)
	}
}

// put adds servo k's part of this period's sync writes: torque off, or a
// torque limit when it changed and the goal position. The bytes live in
// the servo's state; SyncWrite copies them into its packet.
func (a *Arms) put(k int, torque bool, pos, limit float64) {
	model := a.fbus.Model()
	s := &a.servos[k]
	id := a.ids[k]
	if !torque {
		if s.torqueOn || s.limit < 0 {
			s.offData[0] = 0
			a.syncOff = append(a.syncOff, feetech.SyncData{ID: id, Data: s.offData[:]})
			s.torqueOn = false
			s.limit = -1
		}
		return
	}
	lim := int(math.Round(math.Max(0, math.Min(1, limit)) * 1000))
	if lim != s.limit {
		model.Put16(s.limitData[:], uint16(lim))
		a.syncLimits = append(a.syncLimits, feetech.SyncData{ID: id, Data: s.limitData[:]})
		s.limit = lim
	}
	// Goal position, goal time 0, goal speed 0 (the servo's maximum:
	// the setpoints move at the trajectory's pace).
	s.goalData = [6]byte{}
	model.Put16(s.goalData[:], uint16(model.Steps(pos)))
	a.syncGoals = append(a.syncGoals, feetech.SyncData{ID: id, Data: s.goalData[:]})
	s.torqueOn = true
}

// publish sends ArmState, GripperState and the middleware's topics.
func (a *Arms) publish() {
	if a.fbus == nil {
		return
	}
	j := a.cfg.joints
	st := msg.ArmState{ErrorMessage: a.errorMessage, ErrorState: a.errorMessage != ""}
	for i := range j.JointNames {
		s := a.servos[i]
		d := float64(j.Direction[i])
		st.JointPositions = append(st.JointPositions, float32(j.ToURDF(i, s.pos)*180/math.Pi))
		st.JointVelocities = append(st.JointVelocities, float32(d*s.vel*180/math.Pi))
		st.JointEfforts = append(st.JointEfforts, float32(d*s.effort))
		st.InMotion = st.InMotion || s.reachable && s.moving
	}
	st.InMotion = st.InMotion || a.traj != nil || a.queued != nil
	_ = a.Env.Bus.Publish(a.Env.Prefix+"/state", st)
	_ = a.Env.Bus.Publish(a.Env.Prefix+"/gripper/state", a.gripperState())
	a.mw.PublishState()
}

// gripperState reports the gripper from its servo: opening, grip force
// from the load, and whether it holds something (stopped short of a closing
// target against a load).
func (a *Arms) gripperState() msg.GripperState {
	g := a.cfg.Gripper
	k := len(a.ids) - 1
	s := a.servos[k]
	if !s.reachable {
		return msg.GripperState{ErrorState: true, ErrorMessage: fmt.Sprintf("gripper: servo %d does not answer", g.ID)}
	}
	model := a.fbus.Model()
	deg := model.Radians(s.present.Position) * 180 / math.Pi
	pos := (deg - g.ClosedDeg) / (g.OpenDeg - g.ClosedDeg)
	load := math.Abs(float64(s.present.Load)) / 1000
	st := msg.GripperState{
		Position: float32(math.Max(0, math.Min(1, pos))),
		Force:    float32(load * g.MaxForceN),
		InMotion: s.present.Moving,
	}
	// Short of the target by more than 2 % of the travel, still, and
	// squeezing.
	st.Holding = a.gripCommand && !s.present.Moving && pos > a.gripTarget+0.02 && load >= g.GraspLoad
	if s.statusErr != 0 {
		st.ErrorState, st.ErrorMessage = true, fmt.Sprintf("gripper: servo %d reports error 0x%02x", g.ID, s.statusErr)
	}
	return st
}

// motorKind names what drives the joints, for messages.
func (a *Arms) motorKind() string {
	if a.can != nil {
		return "actuator"
	}
	return "servo"
}
