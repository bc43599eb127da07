package motor

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// Defaults of the motor control protocol (docs/roles/arms.md).
const (
	// DefaultResetZeroTimeout bounds a reset_zero call (10000 ms).
	DefaultResetZeroTimeout = 10 * time.Second
	// ZeroTolerance is how close to zero every motor must report itself
	// for a calibration to succeed.
	ZeroTolerance = 0.1 // rad
	// DefaultSessionTimeout is how long a session may go without a command
	// when neither the request nor the configuration says.
	DefaultSessionTimeout = 500 * time.Millisecond
)

// Options configures a Middleware.
type Options struct {
	Joints *Joints
	// TorqueControlled says the motors run the PD + torque law themselves
	// (MIT-mode actuators): every mode and behaviour can be honoured. false
	// means position servos (Feetech STS): POSITION without gains only,
	// KEEP_MODE or ZERO_TORQUE_MODE on release; the rest is refused.
	TorqueControlled bool
	// VelocityControlled says the motors are speed-controlled drives
	// (wheels): VELOCITY is their only mode and an output carries the
	// speed to follow (rad/s); KEEP_MODE is refused, since a drive that
	// keeps its last speed after its client went quiet runs away, and
	// DAMPING_MODE (the default) brings it to a stop.
	VelocityControlled bool
	// RefuseBehaviors names release behaviours these motors cannot honour
	// safely, each with the reason a request naming it is refused with
	// (the balancing base refuses ZERO_TORQUE_MODE: it would fall).
	RefuseBehaviors map[string]string
	// MaxTorque is each joint motor's torque limit, N·m: feed-forward
	// torques are clamped to it.
	MaxTorque []float64
	// DampingKd is each joint's damping in DAMPING_MODE, N·m·s/rad; nil
	// means joints.yaml's kd.
	DampingKd []float64
	// SessionTimeout is the default_timeout_ms of sessions whose request
	// gives none; 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Calibrate makes every motor's present position its zero, in the
	// motor's persistent memory, and calls done on the executor.
	Calibrate func(done func(error))
	// Rand is the source of session uuids; nil means crypto/rand.
	Rand io.Reader
}

// state of the control ownership.
const (
	stateIdle     = "idle"
	stateActive   = "active"
	stateReleased = "released"
	stateTimedOut = "timed_out"
	// statePowerLimited: the session ended because the motors' power
	// stayed above max_power for max_power_duration.
	statePowerLimited = "power_limited"
)

// Middleware is the arm's motor middleware: it arbitrates control between
// clients with sessions, turns their commands into motor outputs, applies
// the release-or-timeout behaviour, and calibrates the motors' zero. It
// runs on one executor; the role that owns the motors calls Update every
// control period with fresh feedback and applies the outputs when it says
// it owns the motors.
type Middleware struct {
	o   Options
	ex  *executor.Executor
	bus bus.Bus
	// Names of the published topics.
	jointStatesTopic, sessionTopic string
	subs                           []bus.Subscription

	uuid, client, behavior string
	// tag is SessionTag of the latest session's uuid, kept after it ended
	// so that session_status says which session ended.
	tag                  string
	timeout              time.Duration
	lastCommand          time.Time
	state, applied, mode string
	commands, rejected   uint64
	accepted             uint64 // commands accepted, every session's
	lastError            string
	setpoints            []*setpoint // held command, URDF frame

	// owns is true while a session or its release behaviour (or a
	// calibration's zero torque) decides the outputs.
	owns bool
	// roleCommands is true while the active session drives through the
	// role's own commands (RequestControlRequest.RoleCommands).
	roleCommands bool

	fb  []Feedback
	out []Output // Update's, reused: valid until the next Update

	overSince time.Time // since when the motors' power is above max_power
	over      bool

	calibrating bool
	calibrated  bool // the motors' zero was written; waiting for positions
	calReply    func(msg.ResetZeroResponse, error)
	calTimer    *executor.Timer
}

// New returns a middleware for the joints of o.Joints.
func New(o Options) (*Middleware, error) {
	if o.Joints == nil {
		return nil, errors.New("motor: Options.Joints: missing")
	}
	if len(o.MaxTorque) != len(o.Joints.JointNames) {
		return nil, fmt.Errorf("motor: Options.MaxTorque: %d values, expected %d (one per joint)", len(o.MaxTorque), len(o.Joints.JointNames))
	}
	if o.DampingKd == nil {
		o.DampingKd = o.Joints.Kd
	}
	if len(o.DampingKd) != len(o.Joints.JointNames) {
		return nil, fmt.Errorf("motor: Options.DampingKd: %d values, expected %d (one per joint)", len(o.DampingKd), len(o.Joints.JointNames))
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	return &Middleware{o: o, state: stateIdle, fb: make([]Feedback, len(o.Joints.JointNames))}, nil
}

// Serve exposes the middleware's services and topics on b under prefix,
// handled on ex. The robot namespace is b's (bus.WithRobotID), as for
// every other name of the node.
func (m *Middleware) Serve(b bus.Bus, ex *executor.Executor, prefix string) error {
	m.ex, m.bus = ex, b
	name := func(n string) string { return msg.MotorName(prefix, n) }
	m.jointStatesTopic, m.sessionTopic = name(msg.MotorJointStates), name(msg.MotorSessionStatus)
	add := func(s bus.Subscription, err error) error {
		if err == nil {
			m.subs = append(m.subs, s)
		}
		return err
	}
	if err := errors.Join(
		add(bus.ServeJSON(b, name(msg.MotorGetAvailableMotors), ex, m.available)),
		add(bus.ServeJSON(b, name(msg.MotorRequestControl), ex, m.request)),
		add(bus.ServeJSON(b, name(msg.MotorReleaseControl), ex, m.release)),
		add(bus.ServeJSON(b, name(msg.MotorResetZero), ex, m.resetZero)),
		add(bus.SubscribeStrictJSON(b, name(msg.MotorControlCommand), bus.QoS{Depth: 4}, ex, func(_ string, c msg.ControlCommand) { m.command(c) })),
	); err != nil {
		m.Close()
		return fmt.Errorf("motor: %w", err)
	}
	return nil
}

// Close ends the services and fails a calibration in progress.
func (m *Middleware) Close() {
	for _, s := range m.subs {
		_ = s.Unsubscribe()
	}
	m.subs = nil
	m.finishCalibration(false, "middleware stopped")
}

// Accepted counts the commands accepted since the middleware started,
// every session's: a role that stopped its motors on its own (an emergency
// stop) drives them again only after a fresh one.
func (m *Middleware) Accepted() uint64 { return m.accepted }

// Active reports whether a session holds the motors.
func (m *Middleware) Active() bool { return m.state == stateActive }

// Owns reports whether the middleware decides the motors' outputs.
func (m *Middleware) Owns() bool { return m.owns }

// Yield hands the motors back to the role after a session ended (the role
// got a command of its own). It refuses while a session is active or a
// calibration runs, unless the session drives through the role's own
// commands: then each one keeps the session alive.
func (m *Middleware) Yield() error {
	switch {
	case m.state == stateActive && m.roleCommands && !m.calibrating:
		m.lastCommand = m.ex.Now()
		m.commands++
		m.accepted++
		return nil
	case m.state == stateActive:
		return fmt.Errorf("the motors are under control of session client %q: release it first", m.client)
	case m.calibrating:
		return errors.New("reset_zero is calibrating the motors")
	}
	m.owns = false
	return nil
}

func (m *Middleware) available(_ msg.GetAvailableMotorsRequest, reply func(msg.GetAvailableMotorsResponse, error)) {
	j := m.o.Joints
	r := msg.GetAvailableMotorsResponse{JointNames: j.JointNames}
	for i, id := range j.MapIndex {
		r.MotorIDs = append(r.MotorIDs, id)
		r.Reachable = append(r.Reachable, m.fb[i].Reachable)
	}
	reply(r, nil)
}

func (m *Middleware) request(req msg.RequestControlRequest, reply func(msg.RequestControlResponse, error)) {
	refuse := func(format string, a ...any) {
		reply(msg.RequestControlResponse{Message: fmt.Sprintf(format, a...)}, nil)
	}
	switch {
	case m.state == stateActive:
		refuse("control is held by client %q: it must call release_control first (or let its session time out)", m.client)
		return
	case m.calibrating:
		refuse("reset_zero is calibrating the motors")
		return
	case req.TimeoutMS < 0:
		refuse("timeout_ms: %d, expected ≥ 0", req.TimeoutMS)
		return
	}
	behavior := req.Behavior
	switch behavior {
	case "":
		behavior = m.DefaultBehavior()
	case msg.BehaviorDamping:
		if !m.o.TorqueControlled && !m.o.VelocityControlled {
			refuse("behavior: DAMPING_MODE needs torque-controlled actuators; these motors are position servos (Feetech STS): choose KEEP_MODE (hold the last position) or ZERO_TORQUE_MODE")
			return
		}
	case msg.BehaviorKeep:
		if m.o.VelocityControlled {
			refuse("behavior: KEEP_MODE would keep these drives running at the last speed after the session ends: choose DAMPING_MODE (stop) or ZERO_TORQUE_MODE")
			return
		}
	case msg.BehaviorZeroTorque:
	default:
		refuse("behavior: %q is not KEEP_MODE, DAMPING_MODE or ZERO_TORQUE_MODE", req.Behavior)
		return
	}
	if why, ok := m.o.RefuseBehaviors[behavior]; ok {
		refuse("behavior: %s: %s", behavior, why)
		return
	}
	var raw [16]byte
	if _, err := io.ReadFull(m.o.Rand, raw[:]); err != nil {
		refuse("no session id: %v", err)
		return
	}
	raw[6] = raw[6]&0x0f | 0x40 // version 4
	raw[8] = raw[8]&0x3f | 0x80 // RFC 4122 variant
	m.uuid = fmt.Sprintf("%x-%x-%x-%x-%x", raw[0:4], raw[4:6], raw[6:8], raw[8:10], raw[10:])
	m.tag = msg.SessionTag(m.uuid)
	m.client, m.behavior, m.mode = req.Client, behavior, ""
	m.timeout = m.o.SessionTimeout
	if req.TimeoutMS > 0 {
		m.timeout = time.Duration(req.TimeoutMS) * time.Millisecond
	}
	m.state, m.applied, m.commands, m.lastError = stateActive, "", 0, ""
	m.lastCommand = m.ex.Now()
	// Until the first command the motors hold where they are.
	m.setpoints = m.holdHere()
	// Under role commands the role goes on driving (its own commands keep
	// the session alive); otherwise the session's commands do.
	m.roleCommands = req.RoleCommands
	m.owns = !req.RoleCommands
	if req.RoleCommands {
		m.mode = "ROLE"
	}
	m.publishSession()
	reply(msg.RequestControlResponse{Success: true, UUID: m.uuid, Message: "control granted"}, nil)
}

// DefaultBehavior is the release behaviour of a session whose request
// names none: DAMPING_MODE as the protocol recommends (on drives: stop),
// on position servos (which cannot damp) KEEP_MODE, holding the last
// position.
func (m *Middleware) DefaultBehavior() string {
	if m.o.TorqueControlled || m.o.VelocityControlled {
		return msg.BehaviorDamping
	}
	return msg.BehaviorKeep
}

// kind says which modes the motors can honour.
func (m *Middleware) kind() motorKind {
	switch {
	case m.o.VelocityControlled:
		return velocityDrives
	case m.o.TorqueControlled:
		return torqueActuators
	}
	return positionServos
}

// holdHere returns position setpoints at the present positions.
func (m *Middleware) holdHere() []*setpoint {
	j := m.o.Joints
	sp := make([]*setpoint, len(j.JointNames))
	for i := range sp {
		sp[i] = &setpoint{q: j.ToURDF(i, m.fb[i].Position), kp: j.Kp[i], kd: j.Kd[i]}
	}
	return sp
}

func (m *Middleware) release(req msg.ReleaseControlRequest, reply func(msg.ReleaseControlResponse, error)) {
	if err := m.check(req.UUID); err != nil {
		reply(msg.ReleaseControlResponse{Message: err.Error()}, nil)
		return
	}
	m.end(stateReleased)
	reply(msg.ReleaseControlResponse{Success: true, Message: "released; motors in " + m.applied}, nil)
}

// check tells whether uuid holds control.
func (m *Middleware) check(uuid string) error {
	switch {
	case m.state != stateActive:
		return errors.New("no control session is active: call request_control first")
	case uuid == "":
		return errors.New("uuid: missing; commands must carry the uuid request_control returned")
	case uuid != m.uuid:
		return fmt.Errorf("uuid %q does not hold control (client %q does)", uuid, m.client)
	}
	return nil
}

// end closes the session and applies its behaviour.
func (m *Middleware) end(state string) {
	if m.roleCommands {
		// The role drove until now: under KEEP_MODE its last command goes
		// on (a head or an arm finishes its move); the other behaviours
		// take the motors from it.
		m.roleCommands = false
		m.owns = m.behavior != msg.BehaviorKeep
		m.setpoints = m.holdHere()
	}
	m.state, m.applied, m.uuid = state, m.behavior, ""
	if m.behavior != msg.BehaviorKeep {
		m.setpoints = nil
	}
	m.publishSession()
}

func (m *Middleware) command(c msg.ControlCommand) {
	err := m.check(c.UUID)
	if err == nil && m.roleCommands {
		err = errors.New("this session drives through the role's own commands (role_commands), not control_command")
	}
	var sp []*setpoint
	if err == nil {
		sp, err = decode(m.o.Joints, c, m.kind())
	}
	if err != nil {
		m.rejected++
		m.lastError = "control_command refused: " + err.Error()
		m.publishSession()
		return
	}
	for i, s := range sp {
		if s != nil {
			m.setpoints[i] = s
		}
	}
	m.mode = c.Mode
	if m.mode == "" {
		m.mode = msg.ModePosition
	}
	m.commands++
	m.accepted++
	m.lastCommand = m.ex.Now()
}

// Update takes the motors' feedback of this control period and returns
// their outputs, with owns false when the role should drive them itself.
// The outputs are valid until the next Update.
func (m *Middleware) Update(fb []Feedback) (out []Output, owns bool) {
	copy(m.fb, fb)
	now := m.ex.Now()
	if m.state == stateActive && now.Sub(m.lastCommand) > m.timeout {
		m.end(stateTimedOut)
	}
	m.watchPower(now)
	if m.calibrated {
		m.checkCalibration()
	}
	if !m.owns {
		return nil, false
	}
	if len(m.out) != len(fb) {
		m.out = make([]Output, len(fb))
	}
	out = m.out
	for i, f := range fb {
		switch {
		case m.calibrating:
			out[i] = Output{}
		case m.state == stateActive || m.applied == msg.BehaviorKeep:
			out[i] = m.drive(i, m.setpoints[i], f)
		case m.applied == msg.BehaviorDamping && m.o.VelocityControlled:
			// A drive stops (its own ramp and speed loop bring it there).
			out[i] = Output{Torque: true}
		case m.applied == msg.BehaviorDamping:
			// τ = −kd·dq: the joint moves only as fast as what pushes it
			// overcomes the damping. Only torque-controlled actuators get
			// here (request refuses DAMPING_MODE on position servos).
			out[i] = Output{Torque: true, Position: f.Position, Kd: m.o.DampingKd[i]}
		default: // ZERO_TORQUE_MODE
			out[i] = Output{}
		}
	}
	return out, true
}

// drive turns joint i's setpoint into its motor's output, in the motor's
// frame: q_motor = direction·(q_urdf − urdf_offset), velocities and torques
// times direction.
func (m *Middleware) drive(i int, s *setpoint, f Feedback) Output {
	j := m.o.Joints
	if m.o.VelocityControlled {
		if s == nil {
			return Output{Torque: true}
		}
		return Output{Torque: true, Velocity: float64(j.Direction[i]) * s.dq}
	}
	if s == nil {
		return Output{Torque: true, Position: f.Position, TorqueLimit: 1, Kp: j.Kp[i], Kd: j.Kd[i]}
	}
	if !m.o.TorqueControlled {
		// POSITION (the only mode decode lets through): the servo's own
		// position loop tracks the goal.
		return Output{Torque: true, Position: j.ToMotor(i, s.q), TorqueLimit: 1}
	}
	d := float64(j.Direction[i])
	lim := m.o.MaxTorque[i]
	o := Output{Torque: true, Position: j.ToMotor(i, s.q), Velocity: d * s.dq, Kp: s.kp, Kd: s.kd,
		FeedForward: math.Max(-lim, math.Min(d*s.tau, lim))}
	if s.torqueMode && s.kp == 0 {
		// Torque only: the position does not act; send the present one so
		// that the frame stays inside the actuator's range.
		o.Position = f.Position
	}
	return o
}

// watchPower enforces the joint table's max_power on an active session:
// the motors' mechanical power Σ|τ·ω| above it for max_power_duration ends
// the session into its release behaviour.
func (m *Middleware) watchPower(now time.Time) {
	j := m.o.Joints
	if j.MaxPower <= 0 || m.state != stateActive {
		m.over = false
		return
	}
	p := 0.0
	for _, f := range m.fb {
		p += math.Abs(f.Effort * f.Velocity)
	}
	if p <= j.MaxPower {
		m.over = false
		return
	}
	if !m.over {
		m.over, m.overSince = true, now
	}
	if now.Sub(m.overSince).Seconds() >= j.MaxPowerDuration {
		m.over = false
		m.lastError = fmt.Sprintf("power %.0f W above max_power %.0f W for %.1f s: session ended into %s", p, j.MaxPower, j.MaxPowerDuration, m.behavior)
		m.end(statePowerLimited)
	}
}

// PublishState publishes joint_states and session_status.
func (m *Middleware) PublishState() {
	if m.bus == nil {
		return
	}
	j := m.o.Joints
	js := msg.JointStates{Header: msg.Header{Stamp: msg.TimeOf(m.ex.Now())}, Name: j.JointNames}
	for i, f := range m.fb {
		d := float64(j.Direction[i])
		js.Position = append(js.Position, j.ToURDF(i, f.Position))
		js.Velocity = append(js.Velocity, d*f.Velocity)
		js.Effort = append(js.Effort, d*f.Effort)
	}
	_ = m.bus.Publish(m.jointStatesTopic, js)
	m.publishSession()
}

func (m *Middleware) publishSession() {
	if m.bus == nil {
		return
	}
	s := msg.SessionStatus{
		State: m.state, Client: m.client, Mode: m.mode, Behavior: m.behavior, Applied: m.applied,
		TimeoutMS: int(m.timeout / time.Millisecond), Commands: m.commands, Rejected: m.rejected,
		LastError: m.lastError, Calibrating: m.calibrating, Session: m.tag,
	}
	_ = m.bus.Publish(m.sessionTopic, s)
}

// resetZero runs the zero calibration (docs/roles/arms.md): refused while a session is
// active, a calibration runs, or a motor is unreachable; otherwise the
// motors go to zero torque, Calibrate writes their zero, and the call
// answers once every motor reports within ZeroTolerance of zero, or fails
// at the timeout.
func (m *Middleware) resetZero(req msg.ResetZeroRequest, reply func(msg.ResetZeroResponse, error)) {
	refuse := func(format string, a ...any) {
		reply(msg.ResetZeroResponse{Message: fmt.Sprintf(format, a...), Positions: m.positions()}, nil)
	}
	switch {
	case m.state == stateActive:
		refuse("a control session is active (client %q): release_control first", m.client)
		return
	case m.calibrating:
		refuse("reset_zero is already running")
		return
	case req.TimeoutMS < 0:
		refuse("timeout_ms: %d, expected ≥ 0", req.TimeoutMS)
		return
	case m.o.Calibrate == nil:
		refuse("these motors cannot store a zero")
		return
	}
	var missing []string
	for i, f := range m.fb {
		if !f.Reachable {
			missing = append(missing, fmt.Sprintf("%s (motor %d)", m.o.Joints.JointNames[i], m.o.Joints.MapIndex[i]))
		}
	}
	if len(missing) > 0 {
		refuse("not every motor is reachable: %s does not answer", strings.Join(missing, ", "))
		return
	}
	timeout := DefaultResetZeroTimeout
	if req.TimeoutMS > 0 {
		timeout = time.Duration(req.TimeoutMS) * time.Millisecond
	}
	m.calibrating, m.owns, m.calReply = true, true, reply
	m.publishSession()
	m.calTimer = m.ex.After(timeout, func() {
		m.finishCalibration(false, fmt.Sprintf("timed out after %v: %s", timeout, m.farthest()))
	})
	m.o.Calibrate(func(err error) {
		if !m.calibrating {
			return
		}
		if err != nil {
			m.finishCalibration(false, "writing the zero: "+err.Error())
			return
		}
		m.calibrated = true
	})
}

// checkCalibration finishes a calibration once every motor reports within
// ZeroTolerance of its zero.
func (m *Middleware) checkCalibration() {
	for _, f := range m.fb {
		if !f.Reachable || math.Abs(f.Position) > ZeroTolerance {
			return
		}
	}
	m.finishCalibration(true, "every motor within 0.1 rad of its new zero; restart the motors' power")
}

func (m *Middleware) finishCalibration(ok bool, text string) {
	if !m.calibrating {
		return
	}
	if m.calTimer != nil {
		m.calTimer.Stop()
	}
	reply := m.calReply
	m.calibrating, m.calibrated, m.calReply, m.calTimer = false, false, nil, nil
	// The motors stay without torque after a calibration, success or
	// not, until a new command or session.
	m.applied, m.setpoints = msg.BehaviorZeroTorque, nil
	if m.state == stateIdle || m.state == stateActive {
		m.state = stateReleased
	}
	m.publishSession()
	if reply != nil {
		reply(msg.ResetZeroResponse{Success: ok, Message: text, Positions: m.positions()}, nil)
	}
}

func (m *Middleware) positions() []float64 {
	p := make([]float64, len(m.fb))
	for i, f := range m.fb {
		p[i] = f.Position
	}
	return p
}

// farthest names the motor farthest from zero, for a failed calibration.
func (m *Middleware) farthest() string {
	worst, at := -1.0, 0
	for i, f := range m.fb {
		if d := math.Abs(f.Position); d > worst {
			worst, at = d, i
		}
	}
	return fmt.Sprintf("%s reports %.3f rad (limit %.1f)", m.o.Joints.JointNames[at], m.fb[at].Position, ZeroTolerance)
}
