package arms_test

import (
	"fmt"
	"io/fs"
	"math"
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
	"github.com/saint-os/saint/roles/rolekit/roletest"
	"github.com/saint-os/saint/sim/robot"
)

// armRig is the left arms role on the simulated robot, with everything it
// publishes (and the simulator's ground truth) recorded.
type armRig struct {
	roletest.Rig
	robot   *robot.Robot
	role    rolekit.Role
	prefix  string
	states  []msg.ArmState
	grips   []msg.GripperState
	truth   []msg.SimArm
	session []msg.SessionStatus
}

func newArmRig(t *testing.T) *armRig {
	t.Helper()
	return newArmRigOn(t, false)
}

// newArmRigOn is newArmRig with the joints on MIT-mode CAN actuators
// (fixtures/config/arms_can/arms_left.yaml on an arms_can board) when
// onCAN.
func newArmRigOn(t *testing.T, onCAN bool) *armRig {
	t.Helper()
	return newArmRigWith(t, onCAN, nil)
}

// newArmRigWith is newArmRigOn with the configuration edited first.
func newArmRigWith(t *testing.T, onCAN bool, edit func(*roleconfig.Config)) *armRig {
	t.Helper()
	ex := executor.NewVirtual()
	b := mem.New()
	t.Cleanup(func() { _ = b.Close() })
	r, err := robot.New(robot.Options{Exec: ex, Bus: b, Seed: 3, CANArms: onCAN})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	rig := &armRig{Rig: roletest.Rig{T: t, Ex: ex, Bus: b}, robot: r, prefix: msg.TopicPrefix(msg.RoleArms, msg.ArmLeft)}
	sub := func(s bus.Subscription, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	deep := bus.QoS{Depth: 1000}
	sub(bus.SubscribeJSON(b, msg.ArmStateTopic(msg.ArmLeft), deep, ex, func(_ string, s msg.ArmState) { rig.states = append(rig.states, s) }))
	sub(bus.SubscribeJSON(b, msg.GripperStateTopic(msg.ArmLeft), deep, ex, func(_ string, s msg.GripperState) { rig.grips = append(rig.grips, s) }))
	sub(bus.SubscribeJSON(b, msg.SimTruthTopic("arm_left"), deep, ex, func(_ string, s msg.SimArm) { rig.truth = append(rig.truth, s) }))
	sub(bus.SubscribeJSON(b, msg.MotorName(rig.prefix, msg.MotorSessionStatus), deep, ex, func(_ string, s msg.SessionStatus) { rig.session = append(rig.session, s) }))
	cfg := roletest.Config(t, "arms_left")
	if onCAN {
		cfg = canConfig(t, "left")
	}
	if edit != nil {
		edit(cfg)
	}
	rig.role, err = roles.New(msg.RoleArms)
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.role.Start(rolekit.Env{NodeID: "sim-arms-left", Exec: ex, Bus: b, Board: r.Board(robot.ArmsLeftPart), Config: cfg, Prefix: rig.prefix}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rig.role.Stop)
	rig.Run(200 * time.Millisecond)
	return rig
}

// canConfig parses fixtures/config/arms_can/arms_{side}.yaml.
func canConfig(t *testing.T, side string) *roleconfig.Config {
	t.Helper()
	name := "arms_can/arms_" + side + ".yaml"
	data, err := fs.ReadFile(fixtures.Config(), name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := roleconfig.ParseFile(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// call calls one of the arm's services and runs the executor until it
// answers.
func call[Resp any](r *armRig, name string, req any) Resp {
	r.T.Helper()
	var resp Resp
	var err error
	done := false
	bus.CallAsyncJSON(r.Bus, msg.MotorName(r.prefix, name), req, 30*time.Second, r.Ex, func(v Resp, e error) { resp, err, done = v, e, true })
	for i := 0; i < 3000 && !done; i++ {
		r.Run(10 * time.Millisecond)
	}
	if !done || err != nil {
		r.T.Fatalf("%s: done %v, err %v", name, done, err)
	}
	return resp
}

func (r *armRig) lastState() msg.ArmState {
	r.T.Helper()
	if len(r.states) == 0 {
		r.T.Fatal("no ArmState published")
	}
	return r.states[len(r.states)-1]
}

func (r *armRig) lastTruth() msg.SimArm {
	r.T.Helper()
	if len(r.truth) == 0 {
		r.T.Fatal("no ground truth published")
	}
	return r.truth[len(r.truth)-1]
}

const deg = math.Pi / 180

// An ArmCommand moves the joints to their targets, all arriving together,
// as the published ArmState and the simulator's ground truth both show.
func TestArmCommandMovesJointsTogether(t *testing.T) {
	r := newArmRig(t)
	start := r.lastTruth().Positions
	target := []float32{60, 0, -30, 45, -90}
	// shoulder_lift has the longest move, 90° at 90 °/s; the time scaling
	// peaks at 1.5 times the mean rate, so the move takes 1.5 s.
	const want = 1500 * time.Millisecond
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: target, SpeedFactor: 1})
	r.truth = r.truth[:0]
	r.Run(2200 * time.Millisecond)
	truth := r.lastTruth()
	st := r.lastState()
	for i, want := range target {
		if got := truth.Positions[i] / deg; math.Abs(got-float64(want)) > 2 {
			t.Errorf("joint %d at %.1f° (truth), want %.0f°", i, got, want)
		}
		if got := st.JointPositions[i]; math.Abs(float64(got-want)) > 2 {
			t.Errorf("joint %d at %.1f° (ArmState), want %.0f°", i, got, want)
		}
	}
	if st.InMotion || st.ErrorState {
		t.Errorf("after the move: in_motion %v, error %q", st.InMotion, st.ErrorMessage)
	}
	// Each joint's progress (fraction of its own travel) is the same at
	// every instant: they move together and arrive together.
	var arrive []time.Duration
	for i := range target {
		travel := float64(target[i])*deg - start[i]
		var at time.Duration
		for k, s := range r.truth {
			if math.Abs(float64(target[i])*deg-s.Positions[i]) > 0.05*math.Abs(travel) {
				at = time.Duration(k+1) * 20 * time.Millisecond
			}
		}
		arrive = append(arrive, at)
	}
	lo, hi := arrive[0], arrive[0]
	for _, a := range arrive {
		lo, hi = min(lo, a), max(hi, a)
	}
	if hi-lo > 150*time.Millisecond || hi < want*8/10 || hi > want+300*time.Millisecond {
		t.Errorf("joints reach 95 %% of their travel at %v: want them together, near %v", arrive, want)
	}
}

// The gripper closes on a command; on an object it stops short, squeezes
// it with about the commanded force, and reports holding it.
func TestGripperClosesAndReportsGrasp(t *testing.T) {
	r := newArmRig(t)
	r.Publish(msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCommand{Position: 1, Force: 10})
	r.Run(time.Second)
	open := r.grips[len(r.grips)-1]
	if open.Position < 0.95 || open.Holding {
		t.Fatalf("open gripper state %+v", open)
	}
	// Empty, it closes all the way and holds nothing.
	r.Publish(msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCommand{Position: 0, Force: 10})
	r.Run(time.Second)
	closed := r.grips[len(r.grips)-1]
	if closed.Position > 0.05 || closed.Holding {
		t.Errorf("empty closed gripper state %+v", closed)
	}
	if gap := r.lastTruth().Gripper; gap > 0.005 {
		t.Errorf("fingers %.3f m apart, want closed", gap)
	}
	// An object 4 cm wide between the open fingers.
	r.Publish(msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCommand{Position: 1, Force: 10})
	r.Run(time.Second)
	r.robot.Arms[0].Grasp(0.04, 0.1)
	r.Publish(msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCommand{Position: 0, Force: 10})
	r.Run(time.Second)
	g := r.grips[len(r.grips)-1]
	truth := r.lastTruth()
	if !g.Holding || g.Position < 0.3 || g.Position > 0.7 {
		t.Errorf("gripper on a 4 cm object: %+v, want holding at about half open", g)
	}
	if !truth.Holding || truth.GraspForce < 5 || truth.GraspForce > 12 {
		t.Errorf("truth: holding %v with %.1f N, want about the commanded 10 N", truth.Holding, truth.GraspForce)
	}
	if math.Abs(float64(g.Force)-truth.GraspForce) > 3 {
		t.Errorf("reported grip force %.1f N, truth %.1f N", g.Force, truth.GraspForce)
	}
}

// A joint that stops following (its servo dead) or stops answering
// (off the bus) raises error_state, and the other joints stop where they
// are instead of finishing the move.
func TestBlockedJointStopsTheArm(t *testing.T) {
	for _, tc := range []struct {
		name, kind, target, want string
	}{
		{"servo dead", msg.DisturbKill, "arm_left/elbow", "elbow does not follow"},
		{"servo off the bus", msg.DisturbCutLink, "arms_left/feetech/3", "elbow: servo 3 does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newArmRig(t)
			r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 90, -90, 0, 0}, SpeedFactor: 1})
			r.Run(time.Second)
			r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{80, 0, -10, 0, 0}, SpeedFactor: 0.5})
			r.Run(500 * time.Millisecond)
			if err := r.robot.World().Disturb(msg.SimDisturbRequest{Kind: tc.kind, Target: tc.target}); err != nil {
				t.Fatal(err)
			}
			r.Run(500 * time.Millisecond)
			st := r.lastState()
			if !st.ErrorState || !strings.Contains(st.ErrorMessage, tc.want) {
				t.Fatalf("state after the fault: error %v %q, want %q", st.ErrorState, st.ErrorMessage, tc.want)
			}
			pan := r.lastTruth().Positions[0]
			r.Run(time.Second)
			if moved := math.Abs(r.lastTruth().Positions[0]-pan) / deg; moved > 1 {
				t.Errorf("shoulder_pan went on %.1f° after the stop", moved)
			}
			if got := r.lastTruth().Positions[0] / deg; got > 70 {
				t.Errorf("shoulder_pan reached %.0f° of its 80° target: the move was not stopped", got)
			}
			if st := r.lastState(); st.InMotion && tc.kind == msg.DisturbCutLink || !st.ErrorState {
				t.Errorf("later state %+v", st)
			}
		})
	}
}

// A joint pushing against more than it can move (a 5 kg load in the hand
// the arm cannot lift) lags further and further at full load: a
// collision, which stops the arm.
func TestOverloadedJointIsACollision(t *testing.T) {
	r := newArmRig(t)
	r.Publish(msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCommand{Position: 1, Force: 20})
	r.Run(500 * time.Millisecond)
	r.robot.Arms[0].Grasp(0.04, 5)
	r.Publish(msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCommand{Position: 0, Force: 20})
	r.Run(500 * time.Millisecond)
	if !r.lastTruth().Holding {
		t.Fatal("the gripper does not hold the load")
	}
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, -30}, SpeedFactor: 1})
	r.Run(3 * time.Second)
	st := r.lastState()
	// The elbow, holding the load out on the forearm, gives first.
	if !st.ErrorState || !strings.HasPrefix(st.ErrorMessage, "collision: elbow blocked") || !strings.Contains(st.ErrorMessage, "100% load") {
		t.Fatalf("error %v %q, want a collision of the elbow at full load", st.ErrorState, st.ErrorMessage)
	}
	if lift := r.lastTruth().Positions[1] / deg; lift < 0 {
		t.Errorf("shoulder_lift at %.0f°: it should not have lifted the load", lift)
	}
}

// A command that is not immediate waits for the move in progress; an
// immediate one abandons it.
func TestArmCommandQueueAndImmediate(t *testing.T) {
	r := newArmRig(t)
	cmd := func(pan float32, immediate bool) {
		r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{pan}, SpeedFactor: 0.5, Immediate: immediate})
	}
	// 60° at 45 °/s: 2 s.
	cmd(60, false)
	r.Run(500 * time.Millisecond)
	cmd(-30, false)
	r.Run(1600 * time.Millisecond)
	if pan := r.lastTruth().Positions[0] / deg; math.Abs(pan-60) > 3 {
		t.Errorf("queued command: shoulder_pan at %.1f° when the first move ends, want 60°", pan)
	}
	r.Run(3 * time.Second)
	if pan := r.lastTruth().Positions[0] / deg; math.Abs(pan+30) > 2 {
		t.Errorf("after the queued move shoulder_pan is at %.1f°, want −30°", pan)
	}
	cmd(60, false)
	r.Run(500 * time.Millisecond)
	cmd(0, true)
	peak := -90.0
	for range 30 {
		r.Run(100 * time.Millisecond)
		peak = max(peak, r.lastTruth().Positions[0]/deg)
	}
	if pan := r.lastTruth().Positions[0] / deg; math.Abs(pan) > 2 || peak > 10 {
		t.Errorf("immediate command: shoulder_pan at %.1f° (peak %.1f°), want 0° without finishing the first move", pan, peak)
	}
}

// The home service takes the arm to the configured home pose; the supply
// is published as PowerState from the INA219 at 0x41.
func TestArmHomeAndPower(t *testing.T) {
	r := newArmRig(t)
	var power []msg.PowerState
	if _, err := bus.SubscribeJSON(r.Bus, msg.PowerTopic(r.prefix), bus.QoS{Depth: 100}, r.Ex, func(_ string, p msg.PowerState) { power = append(power, p) }); err != nil {
		t.Fatal(err)
	}
	home := call[msg.ArmHomeResponse](r, msg.ArmHome, msg.ArmHomeRequest{SpeedFactor: 1})
	if !home.Success {
		t.Fatal(home.Message)
	}
	r.Run(3 * time.Second)
	for i, q := range r.lastTruth().Positions {
		if math.Abs(q) > 2*deg {
			t.Errorf("joint %d at %.1f° after home, want 0°", i, q/deg)
		}
	}
	if len(power) < 20 {
		t.Fatalf("%d PowerState in 3 s, want 10 Hz", len(power))
	}
	if p := power[len(power)-1]; !p.Present || math.Abs(float64(p.Voltage)-12) > 0.3 || p.Current <= 0.15 {
		t.Errorf("power %+v, want about 12 V and the servos' current", p)
	}
	// Commands the arm cannot take are refused in error_message, and the
	// arm stays home.
	for _, tc := range []struct {
		c    msg.ArmCommand
		want string
	}{
		{msg.ArmCommand{TargetPositions: make([]float32, 6), SpeedFactor: 1}, "target_positions: 6 values, expected 1 to 5"},
		{msg.ArmCommand{TargetPositions: []float32{45}, SpeedFactor: 1.5}, "speed_factor: 1.5, expected 0 to 1"},
	} {
		r.Publish(msg.ArmCmdTopic(msg.ArmLeft), tc.c)
		r.Run(100 * time.Millisecond)
		if st := r.lastState(); !strings.Contains(st.ErrorMessage, tc.want) {
			t.Errorf("command %+v: error_message %q, want %q", tc.c, st.ErrorMessage, tc.want)
		}
	}
	if pan := r.lastTruth().Positions[0]; math.Abs(pan) > 2*deg {
		t.Errorf("a refused command moved shoulder_pan to %.1f°", pan/deg)
	}
}

// A bad arms configuration stops Start with the file, line and field,
// joint-table errors included.
func TestArmsConfigErrorsNameLine(t *testing.T) {
	data, err := fs.ReadFile(fixtures.Config(), "roles/arms_left.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lineOf := func(text string) int {
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, text) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", text)
		return 0
	}
	for _, tc := range []struct {
		from, to, field string
	}{
		{"max_joint_speed_dps: [90, 90, 120, 150, 180]", "max_joint_speed_dps: [90, 90, 120, 150]", "max_joint_speed_dps"},
		{"  kp:          [20.0, 30.0, 20.0, 10.0, 10.0]", "  kp:          [20.0, -30.0, 20.0, 10.0, 10.0]", "motor.kp[1]"},
		{"  direction:   [1, 1, 1, 1, 1]", "  direction:   [1, 1, 0, 1, 1]", "motor.direction[2]"},
		{"default_speed_factor: 0.5", "default_sped_factor: 0.5", "default_sped_factor"},
		{"  tracking_error_deg: 10", "  tracking_error: 10", "collision.tracking_error"},
		// The robot namespace is the node's bus namespace, not the role's.
		{"default_timeout_ms: 500", "default_timeout_ms: 500\nrobot_id: \"7\"", "robot_id"},
	} {
		line := lineOf(tc.from)
		if strings.HasPrefix(tc.to, tc.from+"\n") {
			line++ // the line added after it
		}
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		cfg, err := roleconfig.ParseFile("arms_left.yaml", []byte(bad))
		if err != nil {
			t.Fatal(err)
		}
		ex := executor.NewVirtual()
		r, err := robot.New(robot.Options{Exec: ex, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		role, _ := roles.New(msg.RoleArms)
		err = role.Start(rolekit.Env{Exec: ex, Bus: mem.New(), Board: r.Board(robot.ArmsLeftPart), Config: cfg, Prefix: "/saint/arms/left"})
		want := fmt.Sprintf("arms_left.yaml:%d: %s:", line, tc.field)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", tc.field, err, want)
		}
	}
}

// The joint table's max_power: held out straight, the arm draws more than
// 36 W (beyond the INA219's 3.2 A range), so a long move stops after
// max_power_duration with the reason.
func TestArmMaxPowerStopsALongMove(t *testing.T) {
	r := newArmRig(t)
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{0, 0, 0, 0, 0}, SpeedFactor: 1})
	r.Run(2 * time.Second)
	if st := r.lastState(); st.ErrorState {
		t.Fatalf("a 1.5 s move stopped: %q", st.ErrorMessage)
	}
	// 90° at 9 °/s: 15 s.
	r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{90}, SpeedFactor: 0.1})
	r.Run(5 * time.Second)
	st := r.lastState()
	if !st.ErrorState || !strings.Contains(st.ErrorMessage, "above max_power 36 W for 3.0 s: arm stopped") {
		t.Fatalf("state %+v, want stopped by max_power", st)
	}
	pan := r.lastTruth().Positions[0]
	r.Run(time.Second)
	if moved := math.Abs(r.lastTruth().Positions[0]-pan) / deg; moved > 0.5 || pan/deg > 45 {
		t.Errorf("shoulder_pan at %.1f° moved %.1f° after the stop", pan/deg, moved)
	}
}
