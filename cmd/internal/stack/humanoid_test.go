package stack

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/server/motors"
	"github.com/saint-os/saint/sim/model/limb"
)

const humanoidType = "pi_plus-S-12L8A0G2H0W"

// humanoidStack brings the PI Plus–like humanoid up whole, as
// saint-sim --robot-type pi_plus-S-12L8A0G2H0W --adopt does, and waits for
// its five limb nodes to be active.
func humanoidStack(t *testing.T) (*Stack, *bringup.Robot, func(time.Duration)) {
	t.Helper()
	st, robot, run := startRobot(t, testRobot{Type: humanoidType})
	if len(st.Nodes) != 5 {
		t.Fatalf("%d nodes, want the five limbs: %+v", len(st.Nodes), st.Specs)
	}
	run(time.Second)
	return st, robot, run
}

// call calls a root service of the robot and runs the simulation until it
// answers.
func call[Resp any](t *testing.T, st *Stack, run func(time.Duration), name string, req any) Resp {
	t.Helper()
	var resp *Resp
	bus.CallAsyncJSON(st.Broker.Connect(nil), name, req, time.Minute, st.Exec, func(r Resp, err error) {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		resp = &r
	})
	for range 100 {
		if resp != nil {
			return *resp
		}
		run(20 * time.Millisecond)
	}
	t.Fatalf("%s: no answer", name)
	return *resp
}

// The simulated limbs are the limbs the configuration describes: each
// joint's actuator model, mounting direction and zero are the limb role
// configuration's, and its software limits lie within the model's hard
// stops.
func TestHumanoidConfigMatchesItsPhysics(t *testing.T) {
	robot, err := bringup.Resolve(fixtures.Config(), humanoidType)
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range limb.Instances() {
		key := msg.RoleKey(msg.RoleLimb, inst)
		cfg, err := roleconfig.ParseFile(key+".yaml", robot.RoleConfigData[key])
		if err != nil {
			t.Fatal(err)
		}
		var sec struct {
			Actuators struct {
				Bus    string   `yaml:"bus"`
				Models []string `yaml:"models"`
				HostID int      `yaml:"host_id"`
			} `yaml:"actuators"`
		}
		if err := cfg.Decode("actuators", &sec.Actuators); err != nil {
			t.Fatal(err)
		}
		var node *motor.Joints
		for _, g := range robot.Param.MotorGroups {
			if g.Instance == inst {
				node = &motor.Joints{}
				for i, name := range robot.Joints.JointNames {
					if robot.GroupOf(robot.Joints.MapIndex[i]).Name == g.Name {
						node.JointNames = append(node.JointNames, name[len(g.JointPrefix):])
						node.Direction = append(node.Direction, robot.Joints.Direction[i])
						node.Lower = append(node.Lower, robot.Joints.Lower[i])
						node.Upper = append(node.Upper, robot.Joints.Upper[i])
						node.URDFOffset = append(node.URDFOffset, robot.Joints.URDFOffset[i])
					}
				}
			}
		}
		p, err := limb.Humanoid(inst)
		if err != nil {
			t.Fatal(err)
		}
		if node == nil || len(node.JointNames) != len(p.Joints) || len(sec.Actuators.Models) != len(p.Joints) {
			t.Fatalf("%s: %d joints in joints.yaml, %d actuator models, %d simulated", inst, len(node.JointNames), len(sec.Actuators.Models), len(p.Joints))
		}
		for i, j := range p.Joints {
			where := fmt.Sprintf("%s %s", inst, j.Name)
			if node.JointNames[i] != j.Name || sec.Actuators.Models[i] != j.Actuator || float64(node.Direction[i]) != j.Mount || node.URDFOffset[i] != j.ZeroAt {
				t.Errorf("%s: configured %s, %s, direction %d, offset %v; simulated %s, %s, mount %v, zero %v", where,
					node.JointNames[i], sec.Actuators.Models[i], node.Direction[i], node.URDFOffset[i], j.Name, j.Actuator, j.Mount, j.ZeroAt)
			}
			if node.Lower[i] < j.Lower || node.Upper[i] > j.Upper {
				t.Errorf("%s: limits [%v, %v] beyond the hard stops [%v, %v]", where, node.Lower[i], node.Upper[i], j.Lower, j.Upper)
			}
		}
	}
}

// The squat, played at the root on the humanoid hanging on its stand:
// every leg joint of the action follows the action's trajectory (the
// keyframes through s = 3u² − 2u³ from where the joints were) through
// its actuator's PD, and the legs end straight again.
func TestHumanoidPlaysSquat(t *testing.T) {
	st, robot, run := humanoidStack(t)
	a, ok := robot.Action("squat")
	if !ok {
		t.Fatal("no squat")
	}
	type jointRef struct {
		inst string
		i    int
	}
	refs := []jointRef{{limb.LegLeft, 0}, {limb.LegLeft, 3}, {limb.LegLeft, 4}, {limb.LegRight, 0}, {limb.LegRight, 3}, {limb.LegRight, 4}}
	q := func() []float64 {
		var out []float64
		for _, r := range refs {
			out = append(out, st.Robot.Limb(r.inst).Angle(r.i))
		}
		return out
	}
	resp := call[msg.PlayActionResponse](t, st, run, "/"+msg.MotorPlayAction, msg.PlayActionRequest{Name: "squat", Async: true})
	if !resp.Success {
		t.Fatalf("play_action: %+v", resp)
	}
	// The action started from where the joints were when it was granted:
	// the legs hanging still, unpowered.
	start := q()
	worst := make([]float64, len(refs))
	deepest := 0.0
	for k := 1; k <= 100; k++ {
		run(50 * time.Millisecond)
		want, _ := motors.ActionSetpoint(a, start, float64(k)*0.05)
		got := q()
		for i := range refs {
			worst[i] = math.Max(worst[i], math.Abs(got[i]-want[i]))
		}
		deepest = math.Max(deepest, got[1])
	}
	t.Logf("worst tracking errors (rad): %.3f", worst)
	for i, r := range refs {
		// kp 80–100 against the legs' weight, the command 20 ms apart
		// from the samples: a few hundredths of a radian.
		if worst[i] > 0.08 {
			t.Errorf("%s %s: %.3f rad off the action's trajectory at worst", r.inst, st.Robot.Limb(r.inst).Params().Joints[r.i].Name, worst[i])
		}
	}
	if deepest < 1.1 {
		t.Errorf("the left knee bent to %.2f rad at most, want the squat's 1.2", deepest)
	}
	run(time.Second)
	for i, v := range q() {
		if math.Abs(v) > 0.03 {
			t.Errorf("%s joint %d at %.3f rad after the squat, want straight (0)", refs[i].inst, refs[i].i, v)
		}
	}
}

// A MIXED command on the left leg with its knee torque-controlled: kp = kd
// = 0 and the feed-forward torque that holds the shank against gravity.
// The knee stays where it is while the other five joints hold their
// positions; with no torque the same command lets the shank fall.
func TestHumanoidMixedKneeAgainstGravity(t *testing.T) {
	st, robot, run := humanoidStack(t)
	leg := st.Robot.Limb(limb.LegLeft)
	ids := []int{1, 2, 3, 4, 5, 6}
	const knee = 3
	req := call[msg.RequestControlResponse](t, st, run, "/"+msg.MotorRequestControl,
		msg.RequestControlRequest{Client: "mixed", MotorIDs: ids, Behavior: msg.BehaviorDamping})
	if !req.Success {
		t.Fatalf("request_control: %+v", req)
	}
	out := st.Broker.Connect(nil)
	var cmd msg.ControlCommand
	st.Exec.Every(50*time.Millisecond, func() { _ = out.Publish("/"+msg.MotorControlCommand, cmd) })
	// Thigh raised forward, knee slightly bent: the shank hangs 0.9 rad
	// off the vertical, pulled down by its weight.
	pose := []float64{-1.2, 0, 0, 0.3, 0, 0}
	cmd = msg.ControlCommand{UUID: req.UUID, Mode: msg.ModePosition, MotorIDs: ids, Positions: pose}
	run(3 * time.Second)
	if d := leg.Angle(knee) - 0.3; math.Abs(d) > 0.05 {
		t.Fatalf("the knee reached %.3f rad under POSITION, want 0.3", leg.Angle(knee))
	}
	mixed := func(kneeTorque float64) msg.ControlCommand {
		c := msg.ControlCommand{UUID: req.UUID, Mode: msg.ModeMixed, MotorIDs: ids, Positions: pose,
			Torques: make([]float64, 6), Kp: make([]float64, 6), Kd: make([]float64, 6)}
		for i := range ids {
			c.Kp[i], c.Kd[i] = robot.Joints.Kp[i], robot.Joints.Kd[i]
		}
		c.Kp[knee], c.Kd[knee], c.Torques[knee] = 0, 0, kneeTorque
		return c
	}
	hold := leg.GravityTorques()[knee]
	// Where the position loops hold the leg (the hip a little below its
	// goal under the leg's weight, kp 80).
	hip0, knee0 := leg.Angle(0), leg.Angle(knee)
	if math.Abs(hold) < 0.5 {
		t.Fatalf("the knee needs %.2f N·m in this pose: no load to hold", hold)
	}
	cmd = mixed(hold)
	run(2 * time.Second)
	kneeHeld := leg.Angle(knee)
	if d := kneeHeld - knee0; math.Abs(d) > 0.05 {
		t.Errorf("torque-controlled with %.2f N·m the knee moved from %.3f to %.3f rad, want it held", hold, knee0, leg.Angle(knee))
	}
	c, _ := st.Robot.LimbActuator(limb.LegLeft, knee).Command()
	if c.Kp != 0 || c.Kd != 0 || math.Abs(c.Torque-hold) > 0.1 {
		t.Errorf("the knee's actuator runs %+v, want kp = kd = 0 and %.2f N·m", c, hold)
	}
	if h, _ := st.Robot.LimbActuator(limb.LegLeft, 0).Command(); math.Abs(h.Kp-robot.Joints.Kp[0]) > 0.2 {
		t.Errorf("hip_pitch's actuator runs %+v, want position control with kp %v", h, robot.Joints.Kp[0])
	}
	if math.Abs(leg.Angle(0)-hip0) > 0.03 {
		t.Errorf("hip_pitch moved from %.3f to %.3f rad, want it held by its position loop", hip0, leg.Angle(0))
	}
	// Without the torque the shank swings down towards the vertical.
	cmd = mixed(0)
	run(2 * time.Second)
	t.Logf("knee: %.3f rad under POSITION, %.3f after MIXED with %.2f N·m, %.3f with none", knee0, knee0, hold, leg.Angle(knee))
	if leg.Angle(knee) < knee0+0.3 {
		t.Errorf("with no knee torque the knee is at %.3f rad, want the shank fallen (beyond 0.6)", leg.Angle(knee))
	}
}
