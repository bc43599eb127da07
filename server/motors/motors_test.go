package motors_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/motors"
	"github.com/saint-os/saint/server/router"
	"github.com/saint-os/saint/server/router/target"
	"github.com/saint-os/saint/server/ws"
)

const table = `joint_names: [a, b]
map_index: [1, 2]
direction: [1, 1]
lower: [-2, -2]
upper: [2, 2]
kp: [10, 20]
kd: [1, 2]
urdf_offset: [0, 0]
`

// node is a motor role's middleware (the real one) whose motors report
// at rest every 20 ms.
type node struct {
	mw   *motor.Middleware // nil while the node is off
	fb   []motor.Feedback
	out  []motor.Output
	owns bool
	// What a restart needs: the middleware's options, its bus and prefix.
	opts   motor.Options
	bus    bus.Bus
	prefix string
}

// start runs a fresh middleware on the node, as after its process
// restarted: no session.
func (n *node) start(t *testing.T, ex *executor.Executor) {
	t.Helper()
	mw, err := motor.New(n.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := mw.Serve(n.bus, ex, n.prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mw.Close)
	n.mw, n.out, n.owns = mw, nil, false
}

// stop takes the node off the bus (power cut, network gone): its
// services stop answering and it publishes nothing.
func (n *node) stop() {
	n.mw.Close()
	n.mw, n.out, n.owns = nil, nil, false
}

type rig struct {
	t      *testing.T
	ex     *executor.Executor
	bus    bus.Bus
	m      *motors.Motors
	nodes  map[string]*node
	status []msg.SessionStatus
	joints []msg.JointStates
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newRigCalibrating(t, nil)
}

// newRigCalibrating is newRig whose node middlewares calibrate with
// calibrate (nil: they cannot).
func newRigCalibrating(t *testing.T, calibrate func(group string, done func(error))) *rig {
	t.Helper()
	return newRigWith(t, calibrate, false)
}

// driveTable is a speed-controlled drive's joint table (the tracks').
const driveTable = `joint_names: [left_track, right_track]
map_index: [1, 2]
direction: [1, 1]
lower: [-1000, -1000]
upper: [1000, 1000]
kp: [0, 0]
kd: [0, 0]
urdf_offset: [0, 0]
`

// newRigWith is newRigCalibrating whose drive groups (tracks, balance)
// have node middlewares too when drives is set.
func newRigWith(t *testing.T, calibrate func(group string, done func(error)), drives bool) *rig {
	t.Helper()
	ex := executor.NewVirtual()
	// The robot is inside the namespace robot_7; the test's own calls and
	// subscriptions (r.bus) are outside it, as another robot's or a
	// bridge's would be.
	raw := mem.New()
	t.Cleanup(func() { _ = raw.Close() })
	b, err := bus.WithRobotID(raw, "7")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ex: ex, bus: raw, nodes: map[string]*node{}}
	for _, g := range motors.DefaultGroups() {
		if g.Drives && !drives {
			continue
		}
		tab := table
		if g.Drives {
			tab = driveTable
		}
		j, err := motor.ParseJoints([]byte(tab))
		if err != nil {
			t.Fatal(err)
		}
		o := motor.Options{Joints: j, TorqueControlled: !g.Drives, VelocityControlled: g.Drives, MaxTorque: []float64{5, 5}}
		if calibrate != nil {
			name := g.Name
			o.Calibrate = func(done func(error)) { calibrate(name, done) }
		}
		n := &node{fb: []motor.Feedback{{Reachable: true}, {Reachable: true}}, opts: o, bus: b, prefix: g.Prefix}
		n.start(t, ex)
		r.nodes[g.Name] = n
		ex.Every(20*time.Millisecond, func() {
			if n.mw == nil {
				return
			}
			n.out, n.owns = n.mw.Update(n.fb)
			n.mw.PublishState()
		})
	}
	h := feature.NewHost(feature.Options{Gateway: ws.New(ws.Options{}), Exec: ex, Bus: b})
	m, err := motors.Register(h, motors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.m = m
	for _, c := range h.Components() {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
	}
	if _, err := bus.SubscribeJSON(raw, "/robot_7/session_status", bus.QoS{Depth: 100}, ex, func(_ string, s msg.SessionStatus) { r.status = append(r.status, s) }); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(raw, "/robot_7/joint_states", bus.QoS{Depth: 100}, ex, func(_ string, s msg.JointStates) { r.joints = append(r.joints, s) }); err != nil {
		t.Fatal(err)
	}
	r.run(1500 * time.Millisecond)
	return r
}

func (r *rig) run(d time.Duration) {
	r.t.Helper()
	if err := r.ex.RunFor(context.Background(), d); err != nil {
		r.t.Fatal(err)
	}
}

func call[Resp any](r *rig, name string, req any) Resp {
	r.t.Helper()
	var resp Resp
	done := false
	bus.CallAsyncJSON(r.bus, "/robot_7/"+name, req, time.Minute, r.ex, func(v Resp, err error) {
		if err != nil {
			r.t.Errorf("%s: %v", name, err)
		}
		resp, done = v, true
	})
	for i := 0; i < 200 && !done; i++ {
		r.run(50 * time.Millisecond)
	}
	if !done {
		r.t.Fatalf("%s: no answer", name)
	}
	return resp
}

func (r *rig) command(c msg.ControlCommand) {
	r.t.Helper()
	if err := r.bus.Publish("/robot_7/control_command", c); err != nil {
		r.t.Fatal(err)
	}
	r.run(60 * time.Millisecond)
}

func (r *rig) last() msg.SessionStatus {
	r.t.Helper()
	if len(r.status) == 0 {
		r.t.Fatal("no session_status at the root")
	}
	return r.status[len(r.status)-1]
}

// Two clients compete for the motors at the root: one motor's group is
// held by one session only, a disjoint group by another; commands are
// split to the nodes with their own ids; a node session's timeout ends
// the root session.
func TestSessionsAcrossNodes(t *testing.T) {
	r := newRig(t)
	av := call[msg.GetAvailableMotorsResponse](r, msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{})
	if got := av.MotorIDs; len(got) != 6 || got[0] != 11 || got[3] != 22 || got[5] != 32 || av.JointNames[2] != "right_a" || !av.Reachable[3] {
		t.Fatalf("get_available_motors: %+v", av)
	}
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{12}, TimeoutMS: 300})
	if !a.Success {
		t.Fatalf("policy: %+v", a)
	}
	b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop"})
	if b.Success || !strings.Contains(b.Message, `motors of arms_left are held by client "policy"`) {
		t.Errorf("teleop asking for every motor: %+v, want refused naming the holder", b)
	}
	b = call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop", MotorIDs: []int{21, 22}, TimeoutMS: 300})
	if !b.Success || b.UUID == a.UUID {
		t.Fatalf("teleop on the right arm: %+v", b)
	}
	if s := r.last(); len(s.Sessions) != 2 || s.Sessions[0].Client != "policy" || s.Sessions[1].MotorIDs[1] != 22 {
		t.Errorf("sessions %+v", s.Sessions)
	}
	// teleop cannot drive policy's motors.
	r.command(msg.ControlCommand{UUID: b.UUID, Mode: msg.ModePosition, MotorIDs: []int{11}, Positions: []float64{1}})
	if s := r.last(); !strings.Contains(s.LastError, "motor 11 is not held by this session") {
		t.Errorf("teleop commanding motor 11: %q", s.LastError)
	}
	if r.nodes["arms_left"].out[0].Position != 0 {
		t.Errorf("a refused command moved motor 11: %+v", r.nodes["arms_left"].out)
	}
	// policy's command reaches the left node with its ids, in its order.
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModeMixed, MotorIDs: []int{12, 11}, Positions: []float64{0.5, -0.25}, Torques: []float64{1, 0}, Kp: []float64{30, 0}, Kd: []float64{1, 0}})
	left := r.nodes["arms_left"].out
	if left[1] != (motor.Output{Torque: true, Position: 0.5, Kp: 30, Kd: 1, FeedForward: 1}) || left[0].FeedForward != 0 || left[0].Kp != 0 {
		t.Errorf("left node outputs %+v", left)
	}
	r.command(msg.ControlCommand{UUID: b.UUID, Mode: msg.ModePosition, Positions: []float64{0.1, 0.2}})
	if right := r.nodes["arms_right"].out; right[0].Position != 0.1 || right[1].Position != 0.2 || right[1].Kp != 20 {
		t.Errorf("right node outputs %+v", right)
	}
	// A malformed command is refused by field at the root.
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModeTorque, Torques: []float64{1}})
	if s := r.last(); !strings.Contains(s.LastError, "torques: 1 values, expected 2") {
		t.Errorf("short command: %q", s.LastError)
	}
	// A refusal the node makes shows at the root.
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: "VELOCITY", Positions: []float64{0, 0}})
	if s := r.last(); !strings.Contains(s.LastError, `arms_left: control_command refused: mode: "VELOCITY"`) {
		t.Errorf("node refusal at the root: %q", s.LastError)
	}
	// joint_states at the root, robot-wide names.
	names := map[string]bool{}
	for _, js := range r.joints {
		for _, n := range js.Name {
			names[n] = true
		}
	}
	if len(names) != 6 || !names["left_a"] || !names["right_b"] || !names["head_a"] {
		t.Errorf("root joint_states names: %v", names)
	}
	z := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{})
	if z.Success || !strings.Contains(z.Message, "a control session is active") {
		t.Errorf("reset_zero during sessions: %+v", z)
	}
	// teleop goes quiet: its node session times out, so does the root's,
	// and the right arm is free again.
	for range 10 {
		r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModePosition, MotorIDs: []int{11}, Positions: []float64{0.3}})
	}
	if st := r.m.Status(); st.Groups[1].HeldBy != "" || len(st.Sessions) != 1 {
		t.Errorf("after teleop's timeout: %+v", st)
	}
	c := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "ros", MotorIDs: []int{22}})
	if !c.Success {
		t.Errorf("the right arm after teleop timed out: %+v", c)
	}
	if rel := call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: a.UUID}); !rel.Success {
		t.Errorf("release: %+v", rel)
	}
	r.run(100 * time.Millisecond)
	if st := r.m.Status(); st.Groups[0].HeldBy != "" || st.Groups[1].HeldBy != "ros" {
		t.Errorf("after release: %+v", st)
	}
	if n := r.nodes["arms_left"]; !n.owns || n.out[0].Kd != 1 || n.out[0].Kp != 0 {
		t.Errorf("left arm after release: owns %v, %+v: want DAMPING_MODE", n.owns, n.out)
	}
}

// An emergency stop ends every session: the motors are told to hold where
// they are, then released; no session is granted until it is released.
func TestEStopEndsSessions(t *testing.T) {
	r := newRig(t)
	r.nodes["arms_left"].fb[0].Position = 0.7
	r.run(200 * time.Millisecond)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{11}, Behavior: msg.BehaviorKeep, TimeoutMS: 5000})
	if !a.Success {
		t.Fatal(a.Message)
	}
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModeTorque, Torques: []float64{3, 3}})
	if o := r.nodes["arms_left"].out[0]; o.FeedForward != 3 {
		t.Fatalf("TORQUE before the e-stop: %+v", o)
	}
	if err := r.bus.Publish("/robot_7"+msg.TopicTracksEStop, msg.EStop{Active: true, Source: "rc"}); err != nil {
		t.Fatal(err)
	}
	r.run(100 * time.Millisecond)
	if st := r.m.Status(); len(st.Sessions) != 0 || st.Groups[0].HeldBy != "" {
		t.Errorf("sessions after the e-stop: %+v", st)
	}
	// KEEP_MODE keeps the hold, not the torque.
	if o := r.nodes["arms_left"].out[0]; o.FeedForward != 0 || math.Abs(o.Position-0.7) > 1e-9 || o.Kp != 10 {
		t.Errorf("motor 11 after the e-stop: %+v, want held at 0.7 rad", o)
	}
	if b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "b"}); b.Success || !strings.Contains(b.Message, "emergency stop (rc) is latched") {
		t.Errorf("request during the e-stop: %+v", b)
	}
	if err := r.bus.Publish("/robot_7"+msg.TopicTracksEStop, msg.EStop{Active: false, Source: "rc"}); err != nil {
		t.Fatal(err)
	}
	r.run(100 * time.Millisecond)
	if b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "b"}); !b.Success {
		t.Errorf("request after the e-stop: %+v", b)
	}
}

// reset_zero at the root calibrates every group and answers when all have,
// with their positions in group order; a group that fails fails the call,
// named.
func TestResetZeroAcrossNodes(t *testing.T) {
	var r *rig
	r = newRigCalibrating(t, func(group string, done func(error)) {
		if group == "head" {
			done(errors.New("no zero on these"))
			return
		}
		// The motors now report their zero.
		for i := range r.nodes[group].fb {
			r.nodes[group].fb[i].Position = 0.02
		}
		done(nil)
	})
	for _, n := range r.nodes {
		n.fb[0].Position = 0.8
	}
	r.run(100 * time.Millisecond)
	z := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{TimeoutMS: 2000})
	if z.Success || !strings.Contains(z.Message, "head: writing the zero: no zero on these") || !strings.Contains(z.Message, "arms_left: every motor within 0.1 rad") {
		t.Errorf("reset_zero with the head failing: %+v", z)
	}
	if len(z.Positions) != 6 || z.Positions[0] != 0.02 || z.Positions[2] != 0.02 {
		t.Errorf("positions %v, want the arms' new zero first, in group order", z.Positions)
	}
}

// The router's outputs hold real sessions: a root session with a node
// session under role commands; clients are refused naming the router at
// the root and at the node; a client's session refuses the router; a
// router session whose role commands stop times out at the node and is
// taken again; an emergency stop ends it.
func TestRouterHolds(t *testing.T) {
	r := newRig(t)
	hold := func(target string) error {
		t.Helper()
		err := r.m.Hold(target)
		for i := 0; i < 10 && errors.Is(err, router.ErrHoldPending); i++ {
			r.run(10 * time.Millisecond)
			err = r.m.Hold(target)
		}
		return err
	}
	if err := r.m.Hold("arms.left"); !errors.Is(err, router.ErrHoldPending) {
		t.Fatalf("first hold: %v, want pending while the node is asked", err)
	}
	if err := hold("arms.left"); err != nil {
		t.Fatal(err)
	}
	left := r.nodes["arms_left"]
	if left.owns {
		t.Error("the router's session took the arm's motors from its role (it drives through role commands)")
	}
	// The arm's pose target drives the same motors: not while its joint
	// target holds them.
	if err := r.m.Hold("arms.left.pose"); err == nil || !strings.Contains(err.Error(), `held by client "router (arms.left)"`) {
		t.Errorf("the left arm's pose target while its joint target holds the arm: %v", err)
	}
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{11}})
	if a.Success || !strings.Contains(a.Message, `held by client "router (arms.left)"`) {
		t.Errorf("request while the router drives the arm: %+v", a)
	}
	// A client going to the node directly is refused too.
	var direct msg.RequestControlResponse
	bus.CallAsyncJSON(r.bus, "/robot_7/saint/arms/left/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "rogue"}, time.Second, r.ex, func(v msg.RequestControlResponse, err error) { direct = v })
	if st := r.m.Status(); st.Groups[0].HeldBy != "router (arms.left)" || len(st.Sessions) != 1 || st.Sessions[0].Mode != "ROLE" {
		t.Errorf("status %+v", st)
	}
	// The role's commands keep the node session alive.
	tick := r.ex.Every(20*time.Millisecond, func() { _ = left.mw.Yield() })
	r.run(100 * time.Millisecond)
	if direct.Success || !strings.Contains(direct.Message, `held by client "saint-server for router (arms.left)"`) {
		t.Errorf("a request at the node while the router holds it: %+v", direct)
	}
	b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop", MotorIDs: []int{21}, TimeoutMS: 5000})
	if !b.Success {
		t.Fatal(b.Message)
	}
	if err := hold("arms.right"); err == nil || !strings.Contains(err.Error(), `held by client "teleop"`) {
		t.Errorf("router holding the teleop's arm: %v", err)
	}
	r.run(time.Second)
	if err := r.m.Hold("arms.left"); err != nil {
		t.Errorf("a second of role commands later: %v, want still held", err)
	}
	// The role's commands stop (the router lost its source without
	// releasing): the node times the session out, the root follows, and
	// the next Hold asks again.
	tick.Stop()
	r.run(700 * time.Millisecond)
	if st := left.mw.Active(); st || left.owns {
		t.Errorf("the router's node session: active %v, owns %v after its role commands stopped; want timed out into KEEP_MODE (the role's last command goes on)", st, left.owns)
	}
	if err := r.m.Hold("arms.left"); !errors.Is(err, router.ErrHoldPending) {
		t.Errorf("hold after the node timed the session out: %v, want taken again", err)
	}
	if err := hold("arms.left"); err != nil {
		t.Fatal(err)
	}
	r.m.Release("arms.left")
	r.run(50 * time.Millisecond)
	a = call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{11}})
	if !a.Success {
		t.Errorf("request after the router let go: %+v", a)
	}
	if err := hold("head"); err != nil {
		t.Fatal(err)
	}
	// Released while being taken: the node session granted after it is
	// given back.
	if err := r.m.Hold("tracks"); err != nil {
		t.Errorf("tracks without a node: %v, want nothing to hold", err)
	}
	if err := r.bus.Publish("/robot_7"+msg.TopicTracksEStop, msg.EStop{Active: true, Source: "console"}); err != nil {
		t.Fatal(err)
	}
	r.run(50 * time.Millisecond)
	if st := r.m.Status(); len(st.Sessions) != 0 {
		t.Errorf("after the e-stop: %+v", st.Sessions)
	}
	if err := r.m.Hold("head"); err == nil || !strings.Contains(err.Error(), "emergency stop (console)") {
		t.Errorf("hold during the e-stop: %v", err)
	}
}

// A router session released while its node is still being asked leaves
// nothing held: the node session granted after the release is given back.
func TestRouterReleaseWhilePending(t *testing.T) {
	r := newRig(t)
	if err := r.m.Hold("head"); !errors.Is(err, router.ErrHoldPending) {
		t.Fatalf("hold: %v", err)
	}
	r.m.Release("head")
	r.run(100 * time.Millisecond)
	if st := r.m.Status(); len(st.Sessions) != 0 || st.Groups[2].HeldBy != "" {
		t.Errorf("after releasing a pending hold: %+v", st)
	}
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "ui", MotorIDs: []int{31}})
	if !a.Success {
		t.Errorf("the head after the router let go while asking: %+v", a)
	}
}

// The tracks' and the balancing base's drives are motors at the root:
// listed, held by sessions, driven with VELOCITY, stopped by an emergency
// stop (VELOCITY 0, then released into DAMPING_MODE), and left out of
// reset_zero.
func TestDrivesAtTheRoot(t *testing.T) {
	r := newRigWith(t, nil, true)
	av := call[msg.GetAvailableMotorsResponse](r, msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{})
	if got := av.MotorIDs; len(got) != 10 || got[6] != 41 || got[9] != 52 || av.JointNames[6] != "left_track" {
		t.Fatalf("get_available_motors: %+v", av)
	}
	s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "nav", MotorIDs: []int{41, 42}, TimeoutMS: 5000})
	if !s.Success {
		t.Fatalf("request_control: %+v", s)
	}
	tracks := r.nodes["tracks"]
	r.command(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeVelocity, MotorIDs: []int{41, 42}, Velocities: []float64{3, 4}})
	if !tracks.owns || tracks.out[0].Velocity != 3 || tracks.out[1].Velocity != 4 {
		t.Fatalf("tracks node after VELOCITY: owns %v, %+v", tracks.owns, tracks.out)
	}
	r.command(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModePosition, MotorIDs: []int{41}, Positions: []float64{1}})
	if st := r.last(); !strings.Contains(st.LastError, `tracks: control_command refused: mode: "POSITION": these motors are speed-controlled drives`) {
		t.Errorf("POSITION on the tracks: last_error %q", st.LastError)
	}
	if err := r.bus.Publish("/robot_7"+msg.TopicTracksEStop, msg.EStop{Active: true, Source: "rc"}); err != nil {
		t.Fatal(err)
	}
	r.run(100 * time.Millisecond)
	if !tracks.owns || tracks.out[0].Velocity != 0 || tracks.out[1].Velocity != 0 || !tracks.out[0].Torque {
		t.Errorf("tracks node after the e-stop: owns %v, %+v, want stopped", tracks.owns, tracks.out)
	}
	if len(r.m.Sessions()) != 0 {
		t.Errorf("sessions after the e-stop: %+v", r.m.Sessions())
	}
	if err := r.bus.Publish("/robot_7"+msg.TopicTracksEStop, msg.EStop{Active: false, Source: "rc"}); err != nil {
		t.Fatal(err)
	}
	r.run(100 * time.Millisecond)
	// reset_zero skips the drives (they store no zero) rather than fail on
	// them; the other nodes here cannot calibrate either.
	z := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{TimeoutMS: 500})
	if strings.Contains(z.Message, "tracks") || strings.Contains(z.Message, "balance") {
		t.Errorf("reset_zero reached the drives: %+v", z)
	}
}

// A client holding a node's session directly refuses the router there:
// the router is told who holds it, asks again a second later, and gets
// the motors once the client let go.
func TestRouterRefusedAtTheNode(t *testing.T) {
	r := newRig(t)
	var direct msg.RequestControlResponse
	bus.CallAsyncJSON(r.bus, "/robot_7/saint/arms/left/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "bench", TimeoutMS: 60000}, time.Second, r.ex, func(v msg.RequestControlResponse, err error) { direct = v })
	r.run(50 * time.Millisecond)
	if !direct.Success {
		t.Fatalf("request at the node: %+v", direct)
	}
	if err := r.m.Hold("arms.left"); !errors.Is(err, router.ErrHoldPending) {
		t.Fatalf("hold: %v", err)
	}
	r.run(50 * time.Millisecond)
	for i := 0; i < 3; i++ {
		if err := r.m.Hold("arms.left"); err == nil || !strings.Contains(err.Error(), `arms_left: control is held by client "bench"`) {
			t.Fatalf("hold %d after the node refused: %v", i, err)
		}
		r.run(100 * time.Millisecond)
	}
	var rel msg.ReleaseControlResponse
	bus.CallAsyncJSON(r.bus, "/robot_7/saint/arms/left/"+msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: direct.UUID}, time.Second, r.ex, func(v msg.ReleaseControlResponse, err error) { rel = v })
	r.run(time.Second)
	if !rel.Success {
		t.Fatalf("release at the node: %+v", rel)
	}
	err := r.m.Hold("arms.left")
	for i := 0; i < 10 && errors.Is(err, router.ErrHoldPending); i++ {
		r.run(10 * time.Millisecond)
		err = r.m.Hold("arms.left")
	}
	if err != nil {
		t.Errorf("hold after the client let go: %v", err)
	}
}

// Every output target's motor group (package target) is one of the
// default groups, and every default group is behind some target: a
// target whose group were misspelt would hold nothing.
func TestTargetsMotorGroupsAreGroups(t *testing.T) {
	groups := map[string]bool{}
	for _, g := range motors.DefaultGroups() {
		groups[g.Name] = false
	}
	for _, s := range target.Table() {
		if s.MotorGroup == "" {
			continue
		}
		if _, ok := groups[s.MotorGroup]; !ok {
			t.Errorf("target %s: motor group %q is not a default group", s.Name, s.MotorGroup)
		}
		groups[s.MotorGroup] = true
	}
	for g, behind := range groups {
		if !behind {
			t.Errorf("motor group %s is behind no target", g)
		}
	}
}
