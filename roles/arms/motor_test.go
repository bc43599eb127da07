package arms_test

import (
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/sim/robot"
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
	r.Publish(msg.MotorName(r.prefix, msg.MotorControlCommand), c)
}

// One client at a time: a second is refused while the first holds
// control, commands without the uuid are refused with the reason, and
// release lets the second in.
func TestMotorControlOwnership(t *testing.T) {
	t.Run("feetech", func(t *testing.T) { testMotorControlOwnership(t, false) })
	t.Run("can", func(t *testing.T) { testMotorControlOwnership(t, true) })
}

func testMotorControlOwnership(t *testing.T, onCAN bool) {
	r := newArmRigOn(t, onCAN)
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
	if _, err := bus.SubscribeJSON(r.Bus, msg.MotorName(r.prefix, msg.MotorJointStates), bus.QoS{Depth: 10}, r.Ex, func(_ string, v msg.JointStates) { js = append(js, v) }); err != nil {
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
	// The default behaviour: DAMPING_MODE on actuators, KEEP_MODE on
	// servos, which cannot damp.
	want := msg.BehaviorKeep
	if onCAN {
		want = msg.BehaviorDamping
	}
	if s := r.lastSession(); s.State != "released" || s.Applied != want {
		t.Errorf("after release: %+v, want released into the default %s", s, want)
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
// the actuators damping it (refused on servos, which cannot damp),
// ZERO_TORQUE_MODE lets it fall without torque.
func TestMotorTimeoutBehaviours(t *testing.T) {
	for _, onCAN := range []bool{false, true} {
		sink := map[string]float64{}
		for _, behavior := range []string{msg.BehaviorKeep, msg.BehaviorDamping, msg.BehaviorZeroTorque} {
			t.Run(fmt.Sprintf("%s/can=%v", behavior, onCAN), func(t *testing.T) {
				r := newArmRigOn(t, onCAN)
				s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 300, Behavior: behavior})
				if !onCAN && behavior == msg.BehaviorDamping {
					if s.Success || !strings.Contains(s.Message, "DAMPING_MODE needs torque-controlled actuators") {
						t.Errorf("DAMPING_MODE on servos: %+v, want refused", s)
					}
					return
				}
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
				sink[behavior] = r.lastTruth().Positions[2] - before
				powered := func(joint int) bool {
					if onCAN {
						return r.robot.Actuator(0, joint).Enabled()
					}
					return r.robot.Feetech(0).Servo(uint8(joint + 1)).Goal().Torque
				}
				switch behavior {
				case msg.BehaviorKeep:
					if !powered(2) || math.Abs(sink[behavior]) > 0.03 {
						t.Errorf("KEEP: elbow powered %v, moved %.3f rad, want held", powered(2), sink[behavior])
					}
				case msg.BehaviorDamping:
					// The actuator damps: kd = damping_kd, no stiffness.
					c, _ := r.robot.Actuator(0, 2).Command()
					if math.Abs(c.Kd-1.5) > 0.01 || c.Kp != 0 || sink[behavior] < 0.02 {
						t.Errorf("DAMPING: elbow command %+v, sank %.3f rad, want kd 1.5 and sinking", c, sink[behavior])
					}
				case msg.BehaviorZeroTorque:
					for joint := range 5 {
						if powered(joint) {
							t.Errorf("ZERO_TORQUE: joint %d still has torque", joint)
						}
					}
					if math.Abs(sink[behavior]) < 0.3 {
						t.Errorf("ZERO_TORQUE: elbow moved %.3f rad, want it to fall", sink[behavior])
					}
				}
				// An ArmCommand takes the arm back from the release behaviour.
				r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 90, -45, 0, 0}, SpeedFactor: 1})
				r.Run(1500 * time.Millisecond)
				if q := r.lastTruth().Positions[2]; math.Abs(q+math.Pi/4) > 0.04 {
					t.Errorf("after an ArmCommand the elbow is at %.3f rad, want −π/4", q)
				}
			})
		}
		if d, z := sink[msg.BehaviorDamping], sink[msg.BehaviorZeroTorque]; onCAN && math.Abs(d) >= math.Abs(z)/2 {
			t.Errorf("damped forearm sank %.3f rad, free one %.3f: damping does not slow it", d, z)
		}
	}
}

// On servos TORQUE and MIXED are refused with the reason; on actuators
// each mode reaches the actuator as its law: the torque it applies is
// kp·(p_des − p) + kd·(v_des − v) + τ_ff, clamped, on what it measures.
func TestMotorTorqueAndMixedModes(t *testing.T) {
	r := newArmRig(t)
	s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 1000})
	r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeTorque, MotorIDs: []int{1}, Torques: []float64{0.8}})
	r.Run(50 * time.Millisecond)
	if st := r.lastSession(); !strings.Contains(st.LastError, "TORQUE needs torque-controlled actuators") || st.Commands != 0 {
		t.Errorf("TORQUE on servos: %+v", st)
	}

	r = newArmRigOn(t, true)
	s = call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 1000})
	act := func(joint int) (applied, law float64) {
		d := r.robot.Actuator(0, joint)
		c, _ := d.Command()
		p, v, tau := d.LastLoop()
		m := d.Model()
		return tau, math.Max(m.Torque.Min, math.Min(c.Kp*(c.Position-p)+c.Kd*(c.Velocity-v)+c.Torque, m.Torque.Max))
	}
	// TORQUE: shoulder_pan turns about the vertical; the actuator applies
	// the torque, with zero gains.
	for range 5 {
		r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeTorque, MotorIDs: []int{1}, Torques: []float64{0.8}})
		r.Run(50 * time.Millisecond)
	}
	if applied, _ := act(0); math.Abs(applied-0.8) > 0.02 {
		t.Errorf("TORQUE 0.8 N·m: the actuator applies %.3f N·m", applied)
	}
	if c, _ := r.robot.Actuator(0, 0).Command(); c.Kp != 0 || c.Kd != 0 {
		t.Errorf("TORQUE sent gains: %+v", c)
	}
	if tr := r.lastTruth(); tr.Velocities[0] <= 0.05 || math.Abs(tr.Efforts[0]-0.8) > 0.02 {
		t.Errorf("shoulder_pan turns at %.2f rad/s with %.2f N·m under a 0.8 N·m command", tr.Velocities[0], tr.Efforts[0])
	}
	// MIXED, shoulder_pan position-controlled back to −0.5 rad.
	for range 30 {
		r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeMixed, MotorIDs: []int{1}, Positions: []float64{-0.5}, Torques: []float64{0}, Kp: []float64{4}, Kd: []float64{0.4}})
		r.Run(100 * time.Millisecond)
	}
	if q := r.lastTruth().Positions[0]; math.Abs(q+0.5) > 0.05 {
		t.Errorf("MIXED kp 4 kd 0.4 to −0.5 rad: shoulder_pan at %.3f rad", q)
	}
	// MIXED mid-move, with a feed-forward: the law holds at the actuator.
	r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeMixed, MotorIDs: []int{1}, Positions: []float64{0.6}, Velocities: []float64{0.3}, Torques: []float64{0.2}, Kp: []float64{6}, Kd: []float64{0.5}})
	r.Run(30 * time.Millisecond)
	if c, _ := r.robot.Actuator(0, 0).Command(); math.Abs(c.Kp-6) > 0.2 || math.Abs(c.Torque-0.2) > 0.02 || math.Abs(c.Velocity-0.3) > 0.05 {
		t.Errorf("MIXED reached the actuator as %+v", c)
	}
	if applied, law := act(0); math.Abs(applied-law) > 1e-9 || math.Abs(applied) < 0.5 {
		t.Errorf("MIXED: the actuator applies %.3f N·m, its law gives %.3f", applied, law)
	}
	// POSITION with the command's gains, mid-move: the law holds at the
	// actuator, whatever the joint is doing.
	r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModePosition, MotorIDs: []int{1}, Positions: []float64{0.4}, Velocities: []float64{0.2}, Kp: []float64{8}, Kd: []float64{0.5}})
	r.Run(30 * time.Millisecond)
	if applied, law := act(0); math.Abs(applied-law) > 1e-9 {
		t.Errorf("POSITION: the actuator applies %.3f N·m, its law gives %.3f", applied, law)
	}
	if st := r.lastSession(); st.Rejected != 0 {
		t.Errorf("session %+v", st)
	}
}

// MIXED, per motor: the elbow torque-controlled (kp = kd = 0) against
// gravity while the other joints hold their positions. With no torque it
// falls; with the torque position control needed to hold it there, it
// stays.
func TestMotorMixedTorqueAgainstGravity(t *testing.T) {
	r := newArmRigOn(t, true)
	s := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "test", TimeoutMS: 1000})
	pose := []float64{0, math.Pi / 2, -math.Pi / 2, 0, 0}
	for range 20 {
		r.control(msg.ControlCommand{UUID: s.UUID, Mode: msg.ModePosition, Positions: pose})
		r.Run(100 * time.Millisecond)
	}
	hold := r.robot.Actuator(0, 2).Torque() // what holds the forearm out
	if math.Abs(hold) < 0.2 {
		t.Fatalf("the forearm held out takes %.3f N·m: no gravity to work against", hold)
	}
	mixed := func(tau float64) msg.ControlCommand {
		kp := []float64{80, 80, 0, 20, 20}
		kd := []float64{2, 2, 0, 0.3, 0.3}
		return msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeMixed, Positions: pose, Torques: []float64{0, 0, tau, 0, 0}, Kp: kp, Kd: kd}
	}
	start := r.lastTruth().Positions[2]
	for range 10 {
		r.control(mixed(hold))
		r.Run(50 * time.Millisecond)
	}
	if applied := r.robot.Actuator(0, 2).Torque(); math.Abs(applied-hold) > 0.02 {
		t.Errorf("elbow applies %.3f N·m, commanded %.3f", applied, hold)
	}
	if moved := r.lastTruth().Positions[2] - start; math.Abs(moved) > 0.1 {
		t.Errorf("torque-controlled elbow with its holding torque moved %.3f rad in 0.5 s", moved)
	}
	start = r.lastTruth().Positions[2]
	for range 10 {
		r.control(mixed(0))
		r.Run(50 * time.Millisecond)
	}
	if moved := r.lastTruth().Positions[2] - start; math.Abs(moved) < 0.3 || moved*hold > 0 {
		t.Errorf("torque-controlled elbow with no torque moved %.3f rad in 0.5 s, want a fall against its holding torque %.3f", moved, hold)
	}
	// The joints position-controlled meanwhile stayed put.
	if q := r.lastTruth().Positions[1]; math.Abs(q-pose[1]) > 0.05 {
		t.Errorf("shoulder_lift at %.3f rad, want %.3f", q, pose[1])
	}
}

// reset_zero is refused while a session is active or a motor is off the
// bus; on an arm resting in a pose it makes that pose every motor's zero,
// so each reports within 0.1 rad of zero.
func TestMotorResetZero(t *testing.T) {
	t.Run("feetech", func(t *testing.T) { testMotorResetZero(t, false) })
	t.Run("can", func(t *testing.T) { testMotorResetZero(t, true) })
}

func testMotorResetZero(t *testing.T, onCAN bool) {
	r := newArmRigOn(t, onCAN)
	link := "arms_left/feetech/4"
	if onCAN {
		link = "arms_left/can/4"
	}
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

	if err := r.robot.World().CutLink(link); err != nil {
		t.Fatal(err)
	}
	r.Run(200 * time.Millisecond)
	z = call[msg.ResetZeroResponse](r, msg.MotorResetZero, msg.ResetZeroRequest{})
	if z.Success || !strings.Contains(z.Message, "wrist_pitch (motor 4) does not answer") {
		t.Errorf("reset_zero with a servo off the bus: %+v", z)
	}
	if err := r.robot.World().RestoreLink(link); err != nil {
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
	if onCAN {
		if r.robot.Actuator(0, 1).Enabled() {
			t.Error("shoulder_lift actuator enabled after calibration")
		}
	} else if r.robot.Feetech(0).Servo(2).Goal().Torque {
		t.Error("shoulder_lift has torque after calibration")
	}
	// One calibration at a time: a second call while the first runs is
	// refused (the timeout path is tested in roles/motor).
	var first, second *msg.ResetZeroResponse
	name := msg.MotorName(r.prefix, msg.MotorResetZero)
	bus.CallAsyncJSON(r.Bus, name, msg.ResetZeroRequest{}, 20*time.Second, r.Ex, func(v msg.ResetZeroResponse, _ error) { first = &v })
	bus.CallAsyncJSON(r.Bus, name, msg.ResetZeroRequest{}, 20*time.Second, r.Ex, func(v msg.ResetZeroResponse, _ error) { second = &v })
	r.Run(time.Second)
	if first == nil || second == nil || !first.Success || second.Success || !strings.Contains(second.Message, "already running") {
		t.Errorf("two calls at once: %+v, %+v", first, second)
	}
}

// The actuators section's errors name the file, the line and the field.
func TestArmsCANConfigErrors(t *testing.T) {
	data, err := fs.ReadFile(fixtures.Config(), "arms_can/arms_left.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, to, want string
	}{
		{"  models: [ak80_9, ak80_9, ak70_10, ak60_6, ak60_6]", "  models: [ak80_9, ak80_9, ak70_10, ak60_6]", "arms_left.yaml:29: actuators.models: 4 values, expected 5 (one per joint)"},
		{"  models: [ak80_9, ak80_9, ak70_10, ak60_6, ak60_6]", "  models: [ak80_9, ak80_9, ak70_11, ak60_6, ak60_6]", `arms_left.yaml:29: actuators.models[2]: mitmotor: unknown actuator model "ak70_11" (known: [ak10_9`},
		{"  map_index:   [1, 2, 3, 4, 5]", "  map_index:   [1, 2, 3, 4, 200]", "arms_left.yaml:77: motor.map_index[4]: 200 is not an actuator CAN id"},
		{"  bus: can0", "  bus: can7", `arms: can7 (joint actuators): simboard: CAN "can7"`},
	} {
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		if bad == string(data) {
			t.Fatalf("no line %q", tc.from)
		}
		cfg, err := roleconfig.ParseFile("arms_left.yaml", []byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		ex := executor.NewVirtual()
		r, err := robot.New(robot.Options{Exec: ex, Seed: 1, CANArms: true})
		if err != nil {
			t.Fatal(err)
		}
		role, _ := roles.New(msg.RoleArms)
		err = role.Start(rolekit.Env{Exec: ex, Bus: mem.New(), Board: r.Board(robot.ArmsLeftPart), Config: cfg, Prefix: "/saint/arms/left"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
}
