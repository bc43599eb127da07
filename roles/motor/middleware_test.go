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
	t.Helper()
	j, err := ParseJoints([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := New(Options{Joints: j, MaxTorque: []float64{2, 2}, NoLoadSpeed: []float64{5, 5}, Calibrate: calibrate})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, ex: executor.NewVirtual(), bus: mem.New(), mw: mw, fb: []Feedback{{Reachable: true}, {Reachable: true}}}
	if err := mw.Serve(r.bus, r.ex, "/saint/arms/left", "7"); err != nil {
		t.Fatal(err)
	}
	r.ex.Every(20*time.Millisecond, func() { r.out, r.owns = mw.Update(r.fb) })
	t.Cleanup(func() { mw.Close(); _ = r.bus.Close() })
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
	bus.CallAsyncJSON(r.bus, "/saint/arms/left/robot_7/"+name, req, time.Minute, r.ex, func(v Resp, err error) {
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
	if _, err := bus.SubscribeJSON(r.bus, "/saint/arms/left/robot_7/session_status", bus.QoS{Depth: 100}, r.ex, func(_ string, s msg.SessionStatus) { status = append(status, s) }); err != nil {
		t.Fatal(err)
	}
	bad, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Behavior: "BRAKE"})
	if bad.Success || !strings.Contains(bad.Message, `behavior: "BRAKE"`) {
		t.Errorf("bad behaviour: %+v", bad)
	}
	a, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "a", TimeoutMS: 200})
	send := func(c msg.ControlCommand) {
		c.UUID = a.UUID
		if err := r.bus.Publish("/saint/arms/left/robot_7/control_command", c); err != nil {
			t.Fatal(err)
		}
		r.run(40 * time.Millisecond)
	}
	// POSITION, clamped to upper; joint b reversed with an offset: URDF 1.0
	// is motor −(1.0 − 0.5).
	send(msg.ControlCommand{Mode: msg.ModePosition, Positions: []float64{5, 1}})
	if !r.owns || r.out[0].Position != 1 || r.out[1].Position != -0.5 || r.out[0].TorqueLimit != 1 {
		t.Errorf("POSITION outputs %+v", r.out)
	}
	// TORQUE on motor 4 only: 1 N·m URDF is −1 N·m at the reversed motor;
	// at rest that is half its 2 N·m, goal below the present position.
	send(msg.ControlCommand{Mode: msg.ModeTorque, MotorIDs: []int{4}, Torques: []float64{1}})
	if o := r.out[1]; o.TorqueLimit != 0.5 || o.Position >= 0 || r.out[0].Position != 1 {
		t.Errorf("TORQUE outputs %+v", r.out)
	}
	// MIXED: τ = kp·(q_des − q) + kd·(dq_des − dq) + τ_ff on motor 3 at
	// q 0.1, dq 0.2: 2·(0.5 − 0.1) + 1·(0 − 0.2) + 0.3 = 0.9 N·m, plus
	// the back-EMF share 2·0.2/5 = 0.08.
	r.fb[0].Position, r.fb[0].Velocity = 0.1, 0.2
	send(msg.ControlCommand{Mode: msg.ModeMixed, MotorIDs: []int{3}, Positions: []float64{0.5}, Torques: []float64{0.3}, Kp: []float64{2}, Kd: []float64{1}})
	if o := r.out[0]; math.Abs(o.TorqueLimit-0.98/2) > 1e-9 || o.Position <= 0.1 {
		t.Errorf("MIXED output %+v, want limit 0.49 and a goal above", o)
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
	if s.State != "timed_out" || s.Applied != msg.BehaviorDamping || s.Commands != 3 || s.Rejected != 4 {
		t.Errorf("after the timeout: %+v", s)
	}
	// Damping opposes the motion: moving up at 1 rad/s, the goal is below.
	if !r.owns || !r.out[0].Torque || r.out[0].Position >= 0.1 {
		t.Errorf("damping output %+v", r.out[0])
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
	mw, err := New(Options{Joints: j, MaxTorque: []float64{1, 1}, NoLoadSpeed: []float64{1, 1}, Rand: brokenReader{}})
	if err != nil {
		t.Fatal(err)
	}
	var got msg.RequestControlResponse
	mw.request(msg.RequestControlRequest{}, func(r msg.RequestControlResponse, _ error) { got = r })
	if got.Success || !strings.Contains(got.Message, "entropy exhausted") {
		t.Errorf("request: %+v", got)
	}
}

func TestTorqueOutput(t *testing.T) {
	// At rest: limit |τ|/τ_max, goal on τ's side.
	if o := TorqueOutput(-1, 0.2, 0, 0.3, 4, 5); o.TorqueLimit != 0.25 || math.Abs(o.Position+0.1) > 1e-12 || !o.Torque {
		t.Errorf("at rest %+v", o)
	}
	// Moving with the torque, the back-EMF share is added: 1 + 4·2/5.
	if o := TorqueOutput(1, 0, 2, 0.3, 4, 5); math.Abs(o.TorqueLimit-2.6/4) > 1e-12 || o.Position != 0.3 {
		t.Errorf("moving %+v", o)
	}
	// Beyond the servo: limit 1.
	if o := TorqueOutput(10, 0, 0, 0.3, 4, 5); o.TorqueLimit != 1 {
		t.Errorf("saturated %+v", o)
	}
	if got := Torque(2, 1, 0.5, 0.1, 0, 0.2, 0.3); math.Abs(got-0.9) > 1e-12 {
		t.Errorf("Torque = %g, want 0.9", got)
	}
}

// Commands decoded in Go (not over JSON) may carry what JSON cannot.
func TestDecodeRefusesNonFinite(t *testing.T) {
	j, _ := ParseJoints([]byte(table))
	if _, err := decode(j, msg.ControlCommand{Mode: msg.ModePosition, Positions: []float64{math.Inf(1), 0}}); err == nil || !strings.Contains(err.Error(), "positions[0]: not a finite number") {
		t.Errorf("decode: %v", err)
	}
}
