package motors_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/motors"
	"github.com/saint-os/saint/server/ws"
	"github.com/saint-os/saint/sim/robot"
)

// A custom action of the reference robot's custom_action.yaml played on
// the simulated robot through the root middleware: the left arm's joints
// (ground truth) follow the action's trajectory and end on its last
// keyframe, and the arm is free again afterwards.
func TestPlayActionOnTheSimulatedArm(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	t.Cleanup(func() { _ = b.Close() })
	rb, err := robot.New(robot.Options{Exec: ex, Bus: b, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rb.Stop)
	role, err := roles.New(msg.RoleArms)
	if err != nil {
		t.Fatal(err)
	}
	prefix := msg.TopicPrefix(msg.RoleArms, msg.ArmLeft)
	if err := role.Start(rolekit.Env{NodeID: "sim-arms-left", Exec: ex, Bus: b, Board: rb.Board(robot.ArmsLeftPart), Config: roletest.Config(t, "arms_left"), Prefix: prefix}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(role.Stop)
	cfg, err := bringup.Resolve(fixtures.Config(), "saint-T-0L10A2G3H0W")
	if err != nil {
		t.Fatal(err)
	}
	h := feature.NewHost(feature.Options{Gateway: ws.New(ws.Options{}), Exec: ex, Bus: b})
	m, err := motors.Register(h, motors.Options{Robot: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Components() {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
	}
	type sample struct {
		at time.Time
		q  []float64
	}
	var truth []sample
	if _, err := bus.SubscribeJSON(b, msg.SimTruthTopic("arm_left"), bus.QoS{Depth: 1000}, ex, func(_ string, s msg.SimArm) {
		truth = append(truth, sample{ex.Now(), s.Positions})
	}); err != nil {
		t.Fatal(err)
	}
	roletest.Run(t, ex, 1500*time.Millisecond)

	if got := m.ListActions(); len(got.Actions) != 2 || got.Actions[0].Name != "wave_left" || got.Actions[0].DurationS != 3.9 {
		t.Errorf("list_actions: %+v", got)
	}
	// The arm's joints, in the action's order: pan, lift, elbow, roll.
	joints := []int{0, 1, 2, 4}
	start := truth[len(truth)-1].q
	from := []float64{start[0], start[1], start[2], start[4]}
	var resp *msg.PlayActionResponse
	t0 := ex.Now()
	bus.CallAsyncJSON(b, "/"+msg.MotorPlayAction, msg.PlayActionRequest{Name: "wave_left"}, time.Minute, ex, func(r msg.PlayActionResponse, err error) {
		if err != nil {
			t.Error(err)
		}
		resp = &r
	})
	roletest.Run(t, ex, 500*time.Millisecond)
	// While it plays, the arm is held by it.
	other := callRoot[msg.RequestControlResponse](t, ex, b, msg.MotorRequestControl, msg.RequestControlRequest{Client: "teleop", MotorIDs: []int{13}})
	if other.Success || !strings.Contains(other.Message, `held by client "play_action wave_left"`) {
		t.Errorf("request during the action: %+v", other)
	}
	roletest.Run(t, ex, 4*time.Second)
	if resp == nil || !resp.Success || math.Abs(resp.DurationS-3.9) > 0.05 {
		t.Fatalf("play_action: %+v", resp)
	}
	a, _ := cfg.Action("wave_left")
	worst, n := 0.0, 0
	for _, s := range truth {
		dt := s.at.Sub(t0).Seconds()
		if dt < 0.2 || dt > 3.9 {
			continue
		}
		// The servos follow their goals with a lag of about one control
		// period and their own loop's settling.
		want, _ := motors.ActionSetpoint(a, from, dt-0.04)
		for k, i := range joints {
			worst = math.Max(worst, math.Abs(s.q[i]-want[k]))
		}
		n++
	}
	if n < 150 || worst > 0.12 {
		t.Errorf("over %d samples the joints were up to %.3f rad off the action's trajectory", n, worst)
	}
	end := truth[len(truth)-1].q
	last := a.Keyframes[len(a.Keyframes)-1].Positions
	for k, i := range joints {
		if math.Abs(end[i]-last[k]) > 0.04 {
			t.Errorf("joint %d ends at %.3f rad, the last keyframe says %.3f", i, end[i], last[k])
		}
	}
	if st := m.Status(); len(st.Sessions) != 0 || st.Groups[0].HeldBy != "" {
		t.Errorf("after the action: %+v", st)
	}
	if r := callRoot[msg.PlayActionResponse](t, ex, b, msg.MotorPlayAction, msg.PlayActionRequest{Name: "dance"}); r.Success || !strings.Contains(r.Message, `"dance" is not an action`) {
		t.Errorf("unknown action: %+v", r)
	}
}

func callRoot[Resp any](t *testing.T, ex *executor.Executor, b bus.Bus, name string, req any) Resp {
	t.Helper()
	var resp Resp
	done := false
	bus.CallAsyncJSON(b, "/"+name, req, time.Minute, ex, func(v Resp, err error) {
		if err != nil {
			t.Error(err)
		}
		resp, done = v, true
	})
	for i := 0; i < 100 && !done; i++ {
		roletest.Run(t, ex, 20*time.Millisecond)
	}
	if !done {
		t.Fatalf("%s: no answer", name)
	}
	return resp
}
