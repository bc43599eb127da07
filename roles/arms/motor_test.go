package arms_test

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func (r *armRig) lastSession() msg.SessionStatus {
	r.T.Helper()
	if len(r.session) == 0 {
		r.T.Fatal("no session_status published")
	}
	return r.session[len(r.session)-1]
}

func (r *armRig) control(c msg.ControlCommand) {
	r.T.Helper()
	r.Publish(msg.MotorName(r.prefix, "", msg.MotorControlCommand), c)
}

// One client at a time: a second is refused while the first holds
// control, commands without the uuid are refused with the reason, and
// release lets the second in.
func TestMotorControlOwnership(t *testing.T) {
	r := newArmRig(t)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", TimeoutMS: 2000})
	if !a.Success || !uuidV4.MatchString(a.UUID) {
		t.Fatalf("first request: %+v", a)
	}
	b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop"})
	if b.Success || b.UUID != "" || !strings.Contains(b.Message, `control is held by client "policy"`) {
		t.Errorf("second request: %+v, want a refusal naming the holder", b)
	}
	pose := []float64{0.3, 1.2, -1.0, 0.2, 0.5}
	for _, tc := range []struct {
		uuid, why string
	}{
		{"", "uuid: missing"},
		{"0d8a4b6e-1111-4222-8333-444455556666", "does not hold control"},
	} {
		r.control(msg.ControlCommand{UUID: tc.uuid, Mode: msg.ModePosition, Positions: pose})
		r.Run(100 * time.Millisecond)
		if s := r.lastSession(); !strings.Contains(s.LastError, tc.why) {
			t.Errorf("command with uuid %q: last_error %q, want %q", tc.uuid, s.LastError, tc.why)
		}
	}
	if q := r.lastTruth().Positions; math.Abs(q[0]-pose[0]) < 0.1 {
		t.Errorf("a refused command moved the arm: %.2f", q)
	}
	// Malformed commands from the holder are refused by field.
	r.control(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModeMixed, Positions: pose, Torques: []float64{0, 0}})
	r.Run(50 * time.Millisecond)
	if s := r.lastSession(); !strings.Contains(s.LastError, "torques: 2 values, expected 5") || s.Rejected != 3 {
		t.Errorf("short MIXED command: %+v", s)
	}
	// The holder's command moves the arm (clamped to the limits: 1.2 is
	// within shoulder_lift's ±1.7).
	for range 20 {
		r.control(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModePosition, Positions: pose})
		r.Run(100 * time.Millisecond)
	}
	var js []msg.JointStates
	if _, err := bus.SubscribeJSON(r.Bus, msg.MotorName(r.prefix, "", msg.MotorJointStates), bus.QoS{Depth: 10}, r.Ex, func(_ string, v msg.JointStates) { js = append(js, v) }); err != nil {
		t.Fatal(err)
	}
	r.control(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModePosition, Positions: pose})
	r.Run(100 * time.Millisecond)
	for i, q := range r.lastTruth().Positions {
		if math.Abs(q-pose[i]) > 0.03 {
			t.Errorf("joint %d at %.3f rad, want %.3f", i, q, pose[i])
		}
		if len(js) == 0 || len(js[len(js)-1].Position) != 5 || math.Abs(js[len(js)-1].Position[i]-q) > 0.01 || js[len(js)-1].Name[i] != []string{"shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll"}[i] {
			t.Fatalf("joint_states %+v, truth %.3f", js, r.lastTruth().Positions)
		}
	}
	// The role's own commands wait for the session to end.
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 0, 0, 0, 0}, SpeedFactor: 1})
	r.Run(100 * time.Millisecond)
	if st := r.lastState(); !strings.Contains(st.ErrorMessage, `under control of session client "policy"`) {
		t.Errorf("ArmCommand during a session: %q", st.ErrorMessage)
	}
	if rel := call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: "not-it"}); rel.Success {
		t.Error("release with a foreign uuid succeeded")
	}
	if rel := call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: a.UUID}); !rel.Success {
		t.Errorf("release: %+v", rel)
	}
	if s := r.lastSession(); s.State != "released" || s.Applied != msg.BehaviorDamping {
		t.Errorf("after release: %+v, want released into the default DAMPING_MODE", s)
	}
	c := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop"})
	if !c.Success || c.UUID == a.UUID {
		t.Errorf("request after release: %+v", c)
	}
	av := call[msg.GetAvailableMotorsResponse](r, msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{})
	if len(av.MotorIDs) != 5 || av.MotorIDs[2] != 3 || av.JointNames[2] != "elbow" || !av.Reachable[4] {
		t.Errorf("get_available_motors: %+v", av)
	}
}

// When a session times out, the motors do what it asked for: KEEP_MODE
// holds the last command, DAMPING_MODE lets the forearm sink slowly with
// the servos still powered, ZERO_TORQUE_MODE lets it fall with their
// torque off.
func TestMotorTimeoutBehaviours(t *testing.T) {
	sink := map[string]float64{}
	for _, behavior := range []string{msg.BehaviorKeep, msg.BehaviorDamping, msg.BehaviorZeroTorque} {
		t.Run(behavior, func(t *testing.T) {
			r := newArmRig(t)
			s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 300, Behavior: behavior})
			if !s.Success {
				t.Fatal(s.Message)
			}
			// Forearm held out forward, upper arm hanging.
			pose := []float64{0, math.Pi / 2, -math.Pi / 2, 0, 0}
			for range 10 {
				r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModePosition, Positions: pose})
				r.Run(100 * time.Millisecond)
			}
			before := r.lastTruth().Positions[2]
			if st := r.lastSession(); st.State != "active" {
				t.Fatalf("session %+v before the timeout", st)
			}
			r.Run(500 * time.Millisecond) // no commands: the session times out
			if st := r.lastSession(); st.State != "timed_out" || st.Applied != behavior {
				t.Fatalf("session %+v, want timed_out into %s", st, behavior)
			}
			r.Run(500 * time.Millisecond)
			elbow := r.robot.Feetech(0).Servo(3).Goal()
			sink[behavior] = r.lastTruth().Positions[2] - before
			switch behavior {
			case msg.BehaviorKeep:
				if !elbow.Torque || math.Abs(sink[behavior]) > 0.02 {
					t.Errorf("KEEP: elbow torque %v, moved %.3f rad, want held", elbow.Torque, sink[behavior])
				}
			case msg.BehaviorDamping:
				if !elbow.Torque || sink[behavior] < 0.02 {
					t.Errorf("DAMPING: elbow torque %v, sank %.3f rad, want powered and sinking", elbow.Torque, sink[behavior])
				}
			case msg.BehaviorZeroTorque:
				for id := uint8(1); id <= 5; id++ {
					if r.robot.Feetech(0).Servo(id).Goal().Torque {
						t.Errorf("ZERO_TORQUE: servo %d still has torque", id)
					}
				}
				if sink[behavior] < 0.3 {
					t.Errorf("ZERO_TORQUE: elbow sank %.3f rad, want it to fall", sink[behavior])
				}
			}
			// An ArmCommand takes the arm back from the release behaviour.
			r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 90, -45, 0, 0}, SpeedFactor: 1})
			r.Run(1500 * time.Millisecond)
			if q := r.lastTruth().Positions[2]; math.Abs(q+math.Pi/4) > 0.03 {
				t.Errorf("after an ArmCommand the elbow is at %.3f rad, want −π/4", q)
			}
		})
	}
	if d, z := sink[msg.BehaviorDamping], sink[msg.BehaviorZeroTorque]; d >= z/2 {
		t.Errorf("damped forearm sank %.3f rad, free one %.3f: damping does not slow it", d, z)
	}
}

// TORQUE mode pushes with the commanded torque (the servo's output, as
// the simulator measures it), MIXED runs kp/kd on the executor.
func TestMotorTorqueAndMixedModes(t *testing.T) {
	r := newArmRig(t)
	s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 1000})
	// shoulder_pan turns about the vertical: no gravity, only friction.
	for range 5 {
		r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeTorque, MotorIDs: []int{1}, Torques: []float64{0.8}})
		r.Run(50 * time.Millisecond)
	}
	tr := r.lastTruth()
	if e := tr.Efforts[0]; math.Abs(e-0.8) > 0.25 {
		t.Errorf("shoulder_pan effort %.2f N·m under a 0.8 N·m command", e)
	}
	if tr.Velocities[0] <= 0.05 {
		t.Errorf("shoulder_pan turns at %.2f rad/s under a positive torque", tr.Velocities[0])
	}
	for range 30 {
		r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeMixed, MotorIDs: []int{1}, Positions: []float64{-0.5}, Torques: []float64{0}, Kp: []float64{4}, Kd: []float64{0.4}})
		r.Run(100 * time.Millisecond)
	}
	if q := r.lastTruth().Positions[0]; math.Abs(q+0.5) > 0.05 {
		t.Errorf("MIXED kp 4 kd 0.4 to −0.5 rad: shoulder_pan at %.3f rad", q)
	}
	if s := r.lastSession(); s.Mode != msg.ModeMixed || s.Rejected != 0 {
		t.Errorf("session %+v", s)
	}
}

// reset_zero is refused while a session is active or a motor is off the
// bus; on an arm resting in a pose it makes that pose every motor's zero,
// so each reports within 0.1 rad of zero.
func TestMotorResetZero(t *testing.T) {
	r := newArmRig(t)
	// The arm hanging straight down rests there with its torque off.
	hanging := []float32{20, 90, 0, 0, 30}
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: hanging, SpeedFactor: 1})
	r.Run(2 * time.Second)

	s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 5000})
	z := call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{})
	if z.Success || !strings.Contains(z.Message, `a control session is active (client "test")`) {
		t.Errorf("reset_zero during a session: %+v", z)
	}
	call[msg.ReleaseControlResponse](r, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: s.UUID})
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: hanging, SpeedFactor: 1})
	r.Run(time.Second)

	if err := r.robot.World().CutLink("arms_left/feetech/4"); err != nil {
		t.Fatal(err)
	}
	r.Run(200 * time.Millisecond)
	z = call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{})
	if z.Success || !strings.Contains(z.Message, "wrist_pitch (motor 4) does not answer") {
		t.Errorf("reset_zero with a servo off the bus: %+v", z)
	}
	if err := r.robot.World().RestoreLink("arms_left/feetech/4"); err != nil {
		t.Fatal(err)
	}
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: hanging, SpeedFactor: 1})
	r.Run(time.Second)

	before := r.lastTruth().Positions
	start := r.Ex.Now()
	z = call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{})
	if !z.Success {
		t.Fatalf("reset_zero: %+v", z)
	}
	if took := r.Ex.Now().Sub(start); took > time.Second {
		t.Errorf("reset_zero answered after %v", took)
	}
	for i, q := range z.Positions {
		if math.Abs(q) > 0.1 {
			t.Errorf("motor %d reports %.3f rad after reset_zero", i+1, q)
		}
	}
	// Nothing moved: the zero moved to the arm.
	r.Run(500 * time.Millisecond)
	for i, q := range r.lastTruth().Positions {
		if math.Abs(q-before[i]) > 0.05 {
			t.Errorf("joint %d moved from %.3f to %.3f rad during calibration", i, before[i], q)
		}
		if p := r.lastState().JointPositions[i]; math.Abs(float64(p)) > 0.1/deg {
			t.Errorf("ArmState joint %d at %.1f° after calibration, want about 0", i, p)
		}
	}
	// The motors are left without torque.
	if r.robot.Feetech(0).Servo(2).Goal().Torque {
		t.Error("shoulder_lift has torque after calibration")
	}
	// One calibration at a time: a second call while the first runs is
	// refused (the timeout path is tested in roles/motor).
	var first, second *msg.ResetZeroResponse
	name := msg.MotorName(r.prefix, "", msg.MotorResetZero)
	bus.CallAsyncJSON(r.Bus, name, msg.ResetZeroRequest{}, 20*time.Second, r.Ex, func(v msg.ResetZeroResponse, _ error) { first = &v })
	bus.CallAsyncJSON(r.Bus, name, msg.ResetZeroRequest{}, 20*time.Second, r.Ex, func(v msg.ResetZeroResponse, _ error) { second = &v })
	r.Run(time.Second)
	if first == nil || second == nil || !first.Success || second.Success || !strings.Contains(second.Message, "already running") {
		t.Errorf("two calls at once: %+v, %+v", first, second)
	}
}
