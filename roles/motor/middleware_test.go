package motor

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
)

const table = `joint_names: [a, b]
map_index: [3, 4]
direction: [1, -1]
lower: [-1, -1]
upper: [1, 1]
kp: [10, 20]
kd: [1, 2]
urdf_offset: [0, 0.5]
`

// rig is a middleware on a virtual executor whose motors report fb every
// 20 ms.
type rig struct {
	t    *testing.T
	ex   *executor.Executor
	bus  bus.Bus
	mw   *Middleware
	fb   []Feedback
	out  []Output
	owns bool
}

func newRig(t *testing.T, calibrate func(done func(error))) *rig {
	return newRigWith(t, Options{TorqueControlled: true, Calibrate: calibrate})
}

// newRigWith completes o with the table's joints and 2 N·m motors.
func newRigWith(t *testing.T, o Options) *rig {
	t.Helper()
	j, err := ParseJoints([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	o.Joints, o.MaxTorque = j, []float64{2, 2}
	mw, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	outside := mem.New()
	r := &rig{t: t, ex: executor.NewVirtual(), bus: outside, mw: mw, fb: []Feedback{{Reachable: true}, {Reachable: true}}}
	// The node's bus is inside robot 7's namespace; the test's clients
	// are outside it and use the names on the wire.
	nb, err := bus.WithRobotID(outside.Broker().Connect(nil), "7")
	if err != nil {
		t.Fatal(err)
	}
	if err := mw.Serve(nb, r.ex, "/saint/arms/left"); err != nil {
		t.Fatal(err)
	}
	r.ex.Every(20*time.Millisecond, func() { r.out, r.owns = mw.Update(r.fb) })
	t.Cleanup(func() { mw.Close(); _ = nb.Close(); _ = r.bus.Close() })
	return r
}

func (r *rig) run(d time.Duration) {
	r.t.Helper()
	if err := r.ex.RunFor(context.Background(), d); err != nil {
		r.t.Fatal(err)
	}
}

// call calls a service under the robot namespace and returns the answer
// and the virtual time it took.
func call[Resp any](r *rig, name string, req any) (Resp, time.Duration) {
	r.t.Helper()
	var resp Resp
	done := false
	start := r.ex.Now()
	var took time.Duration
	bus.CallAsyncJSON(r.bus, "/robot_7/saint/arms/left/"+name, req, time.Minute, r.ex, func(v Resp, err error) {
		if err != nil {
			r.t.Errorf("%s: %v", name, err)
		}
		resp, done, took = v, true, r.ex.Now().Sub(start)
	})
	for i := 0; i < 700 && !done; i++ {
		r.run(100 * time.Millisecond)
	}
	if !done {
		r.t.Fatalf("%s: no answer", name)
	}
	return resp, took
}

func TestResetZeroDefaultTimeout(t *testing.T) {
	calls := 0
	r := newRig(t, func(done func(error)) { calls++; done(nil) })
	r.fb[1].Position = 0.5 // never within 0.1 rad
	r.run(100 * time.Millisecond)
	z, took := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{})
	if z.Success || !strings.Contains(z.Message, "timed out after 10s") || !strings.Contains(z.Message, "b reports 0.500 rad") {
		t.Errorf("reset_zero: %+v", z)
	}
	if took < 10*time.Second || took > 10*time.Second+100*time.Millisecond {
		t.Errorf("answered after %v, want the 10 s default", took)
	}
	if calls != 1 {
		t.Errorf("Calibrate called %d times", calls)
	}
	// Motors without torque while and after calibrating.
	if !r.owns || r.out[0].Torque || r.out[1].Torque {
		t.Errorf("after a calibration: owns %v, outputs %+v", r.owns, r.out)
	}
}

func TestResetZeroSucceedsWithinTolerance(t *testing.T) {
	r := newRig(t, func(done func(error)) { done(nil) })
	r.fb[0].Position, r.fb[1].Position = 0.09, -0.09
	r.run(100 * time.Millisecond)
	z, took := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{TimeoutMS: 3000})
	if !z.Success || len(z.Positions) != 2 || z.Positions[0] != 0.09 {
		t.Errorf("reset_zero: %+v", z)
	}
	if took > 100*time.Millisecond {
		t.Errorf("answered after %v: it should answer at the next control period", took)
	}
}

func TestResetZeroRefusals(t *testing.T) {
	failing := newRig(t, func(done func(error)) { done(errors.New("servo 4: no answer")) })
	failing.run(100 * time.Millisecond)
	if z, _ := call[msg.ResetZeroResponse](failing, msg.MotorResetZero, msg.ResetZeroRequest{}); z.Success || !strings.Contains(z.Message, "writing the zero: servo 4: no answer") {
		t.Errorf("failed write: %+v", z)
	}
	r := newRig(t, func(done func(error)) { done(nil) })
	r.fb[1].Reachable = false
	r.run(100 * time.Millisecond)
	if z, _ := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{}); z.Success || !strings.Contains(z.Message, "b (motor 4) does not answer") {
		t.Errorf("unreachable motor: %+v", z)
	}
	r.fb[1].Reachable = true
	s, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "x"})
	if z, _ := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{}); z.Success || !strings.Contains(z.Message, "control session is active") {
		t.Errorf("during a session: %+v", z)
	}
	if err := r.mw.Yield(); err == nil {
		t.Error("Yield during a session succeeded")
	}
	call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: s.UUID})
	if err := r.mw.Yield(); err != nil || r.mw.Owns() {
		t.Errorf("Yield after release: %v, owns %v", err, r.mw.Owns())
	}
}

func TestSessionsAndCommands(t *testing.T) {
	r := newRig(t, nil)
	var status []msg.SessionStatus
	if _, err := bus.SubscribeJSON(r.bus, "/robot_7/saint/arms/left/session_status", bus.QoS{Depth: 100}, r.ex, func(_ string, s msg.SessionStatus) { status = append(status, s) }); err != nil {
		t.Fatal(err)
	}
	bad, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Behavior: "BRAKE"})
	if bad.Success || !strings.Contains(bad.Message, `behavior: "BRAKE"`) {
		t.Errorf("bad behaviour: %+v", bad)
	}
	a, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "a", TimeoutMS: 200})
	send := func(c msg.ControlCommand) {
		c.UUID = a.UUID
		if err := r.bus.Publish("/robot_7/saint/arms/left/control_command", c); err != nil {
			t.Fatal(err)
		}
		r.run(40 * time.Millisecond)
	}
	// POSITION, clamped to upper; joint b reversed with an offset: URDF 1.0
	// is motor −(1.0 − 0.5). Gains from joints.yaml, no torque.
	send(msg.ControlCommand{Mode: msg.ModePosition, Positions: []float64{5, 1}, Velocities: []float64{0, 0.3}})
	want := []Output{
		{Torque: true, Position: 1, Kp: 10, Kd: 1},
		{Torque: true, Position: -0.5, Velocity: -0.3, Kp: 20, Kd: 2},
	}
	if !r.owns || r.out[0] != want[0] || r.out[1] != want[1] {
		t.Errorf("POSITION outputs %+v, want %+v", r.out, want)
	}
	// POSITION with the command's gains.
	send(msg.ControlCommand{Mode: msg.ModePosition, MotorIDs: []int{3}, Positions: []float64{0.2}, Kp: []float64{40}, Kd: []float64{0.5}})
	if o := r.out[0]; o.Kp != 40 || o.Kd != 0.5 || o.Position != 0.2 || o.FeedForward != 0 {
		t.Errorf("POSITION with gains: %+v", o)
	}
	// TORQUE on motor 4 only: 1 N·m URDF is −1 N·m at the reversed motor,
	// with zero gains; motor 3 keeps its position command.
	r.fb[1].Position = 0.25
	send(msg.ControlCommand{Mode: msg.ModeTorque, MotorIDs: []int{4}, Torques: []float64{1}})
	if o := r.out[1]; o != (Output{Torque: true, Position: 0.25, FeedForward: -1}) || r.out[0].Position != 0.2 {
		t.Errorf("TORQUE outputs %+v", r.out)
	}
	// Beyond the motor's 2 N·m the feed-forward is clamped.
	send(msg.ControlCommand{Mode: msg.ModeTorque, MotorIDs: []int{3}, Torques: []float64{-9}})
	if o := r.out[0]; o.FeedForward != -2 {
		t.Errorf("TORQUE −9 N·m on a 2 N·m motor: %+v", o)
	}
	// MIXED, per motor: motor 3 position-controlled with a feed-forward,
	// motor 4 torque-controlled (kp = kd = 0).
	send(msg.ControlCommand{Mode: msg.ModeMixed, Positions: []float64{0.5, 0}, Torques: []float64{0.3, 0.7}, Kp: []float64{2, 0}, Kd: []float64{1, 0}})
	if o := r.out[0]; o != (Output{Torque: true, Position: 0.5, Kp: 2, Kd: 1, FeedForward: 0.3}) {
		t.Errorf("MIXED motor 3: %+v", o)
	}
	if o := r.out[1]; o != (Output{Torque: true, Position: 0.25, FeedForward: -0.7}) {
		t.Errorf("MIXED motor 4: %+v", o)
	}
	for _, tc := range []struct {
		c   msg.ControlCommand
		why string
	}{
		{msg.ControlCommand{Mode: "VELOCITY", Positions: []float64{0, 0}}, `mode: "VELOCITY"`},
		{msg.ControlCommand{Mode: msg.ModePosition, MotorIDs: []int{9}, Positions: []float64{0}}, "motor_ids[0]: 9"},
		{msg.ControlCommand{Mode: msg.ModeTorque}, "torques: 0 values, expected 2"},
		{msg.ControlCommand{Mode: msg.ModeMixed, Positions: []float64{0, 0}, Torques: []float64{0, 0}, Kp: []float64{1, -1}, Kd: []float64{0, 0}}, "kp[1]"},
	} {
		send(tc.c)
		if s := status[len(status)-1]; !strings.Contains(s.LastError, tc.why) {
			t.Errorf("command %+v: last_error %q, want %q", tc.c, s.LastError, tc.why)
		}
	}
	// No commands for 200 ms: timed out into DAMPING_MODE.
	r.fb[0].Velocity = 1
	r.run(300 * time.Millisecond)
	s := status[len(status)-1]
	if s.State != "timed_out" || s.Applied != msg.BehaviorDamping || s.Commands != 5 || s.Rejected != 4 {
		t.Errorf("after the timeout: %+v", s)
	}
	// The status names the session that ended by its tag, never its uuid.
	if s.Session != msg.SessionTag(a.UUID) || s.Session == "" || strings.Contains(s.Session, a.UUID) {
		t.Errorf("session %q after the timeout, want the tag of %q", s.Session, a.UUID)
	}
	// Damping: kd only, the actuator computes −kd·dq.
	if o := r.out[0]; !r.owns || o != (Output{Torque: true, Position: r.fb[0].Position, Kd: 1}) {
		t.Errorf("damping output %+v", o)
	}
	b, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "b"})
	if !b.Success || b.UUID == a.UUID {
		t.Errorf("new session: %+v", b)
	}
}

type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

func TestRequestWithoutRandomness(t *testing.T) {
	j, _ := ParseJoints([]byte(table))
	mw, err := New(Options{Joints: j, MaxTorque: []float64{1, 1}, Rand: brokenReader{}})
	if err != nil {
		t.Fatal(err)
	}
	var got msg.RequestControlResponse
	mw.request(msg.RequestControlRequest{}, func(r msg.RequestControlResponse, _ error) { got = r })
	if got.Success || !strings.Contains(got.Message, "entropy exhausted") {
		t.Errorf("request: %+v", got)
	}
}

func TestTorqueLaw(t *testing.T) {
	if got := Torque(2, 1, 0.5, 0.1, 0, 0.2, 0.3); math.Abs(got-0.9) > 1e-12 {
		t.Errorf("Torque = %g, want 0.9", got)
	}
}

// On position servos what they cannot do is refused with the reason, not
// imitated: TORQUE, MIXED, gains with POSITION, DAMPING_MODE.
func TestPositionServoRefusals(t *testing.T) {
	r := newRigWith(t, Options{})
	var status []msg.SessionStatus
	if _, err := bus.SubscribeJSON(r.bus, "/robot_7/saint/arms/left/session_status", bus.QoS{Depth: 100}, r.ex, func(_ string, s msg.SessionStatus) { status = append(status, s) }); err != nil {
		t.Fatal(err)
	}
	d, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "a", Behavior: msg.BehaviorDamping})
	if d.Success || !strings.Contains(d.Message, "DAMPING_MODE needs torque-controlled actuators") {
		t.Errorf("DAMPING_MODE on position servos: %+v", d)
	}
	a, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "a"})
	if !a.Success {
		t.Fatal(a.Message)
	}
	for _, tc := range []struct {
		c   msg.ControlCommand
		why string
	}{
		{msg.ControlCommand{Mode: msg.ModeTorque, Torques: []float64{0, 0}}, "mode: TORQUE needs torque-controlled actuators"},
		{msg.ControlCommand{Mode: msg.ModeMixed, Positions: []float64{0, 0}, Torques: []float64{0, 0}, Kp: []float64{1, 1}, Kd: []float64{0, 0}}, "mode: MIXED needs torque-controlled actuators"},
		{msg.ControlCommand{Mode: msg.ModePosition, Positions: []float64{0, 0}, Kp: []float64{1, 1}}, "kp, kd: these motors are position servos"},
	} {
		tc.c.UUID = a.UUID
		if err := r.bus.Publish("/robot_7/saint/arms/left/control_command", tc.c); err != nil {
			t.Fatal(err)
		}
		r.run(40 * time.Millisecond)
		if s := status[len(status)-1]; !strings.Contains(s.LastError, tc.why) {
			t.Errorf("%s: last_error %q, want %q", tc.c.Mode, s.LastError, tc.why)
		}
	}
	if err := r.bus.Publish("/robot_7/saint/arms/left/control_command", msg.ControlCommand{UUID: a.UUID, Positions: []float64{0.3, 0}}); err != nil {
		t.Fatal(err)
	}
	r.run(40 * time.Millisecond)
	if o := r.out[0]; o != (Output{Torque: true, Position: 0.3, TorqueLimit: 1}) {
		t.Errorf("POSITION on a servo: %+v", o)
	}
	// Released without a behaviour: KEEP_MODE, the servos hold.
	call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: a.UUID})
	r.run(40 * time.Millisecond)
	if s := status[len(status)-1]; s.Applied != msg.BehaviorKeep || r.out[0].Position != 0.3 {
		t.Errorf("after release: %+v, output %+v", s, r.out[0])
	}
}

// max_power: the motors' power Σ|τ·ω| above it for max_power_duration ends
// the session into its behaviour.
func TestMaxPower(t *testing.T) {
	j, err := ParseJoints([]byte(table + "max_power: 10\nmax_power_duration: 0.2\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, nil)
	r.mw.o.Joints = j
	a, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "a", TimeoutMS: 5000})
	r.fb[0].Effort, r.fb[0].Velocity = 2, 4  // 8 W
	r.fb[1].Effort, r.fb[1].Velocity = -1, 1 // 1 W
	r.run(500 * time.Millisecond)
	if r.mw.state != stateActive {
		t.Fatalf("9 W ended the session under a 10 W budget: %s", r.mw.state)
	}
	r.fb[1].Velocity = 3 // 11 W
	r.run(150 * time.Millisecond)
	if r.mw.state != stateActive {
		t.Fatalf("ended after 150 ms over a 200 ms budget")
	}
	r.run(100 * time.Millisecond)
	if r.mw.state != statePowerLimited || r.mw.applied != msg.BehaviorDamping || !strings.Contains(r.mw.lastError, "power 11 W above max_power 10 W for 0.2 s") {
		t.Errorf("after 250 ms at 11 W: state %s, applied %s, %q", r.mw.state, r.mw.applied, r.mw.lastError)
	}
	_ = a
}

// Commands decoded in Go (not over JSON) may carry what JSON cannot.
func TestDecodeRefusesNonFinite(t *testing.T) {
	j, _ := ParseJoints([]byte(table))
	if _, err := decode(j, msg.ControlCommand{Mode: msg.ModePosition, Positions: []float64{math.Inf(1), 0}}, torqueActuators); err == nil || !strings.Contains(err.Error(), "positions[0]: not a finite number") {
		t.Errorf("decode: %v", err)
	}
}
