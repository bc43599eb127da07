package stack

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/sim/model/arm"
)

// The whole simulated robot brought up as saint_can-T-0L10A2G3H0W, as
// saint-sim --robot-type runs it: the arms' boards carry MIT-mode actuator
// twins, the arms nodes are adopted with the CAN role configurations the
// robot type selects, and a custom action played at the root moves the
// left arm through the actuators to its last keyframe.
func TestCANArmsRobotType(t *testing.T) {
	st, robot, run := startRobot(t, testRobot{Type: "saint_can-T-0L10A2G3H0W", Adopt: []string{"sim-arms-left", "sim-arms-right"}})
	if st.Robot.Actuator(0, 2) == nil {
		t.Fatal("the simulated robot's arms are not on actuators")
	}
	run(2 * time.Second)
	if !st.Robot.Actuator(0, 2).Enabled() {
		t.Fatal("the arms role did not enable the elbow's actuator")
	}
	b := st.Broker.Connect(nil)
	var resp *msg.PlayActionResponse
	bus.CallAsyncJSON(b, "/"+msg.MotorPlayAction, msg.PlayActionRequest{Name: "wave_left"}, time.Minute, st.Exec, func(r msg.PlayActionResponse, err error) {
		if err != nil {
			t.Error(err)
		}
		resp = &r
	})
	run(5 * time.Second)
	if resp == nil || !resp.Success {
		t.Fatalf("play_action: %+v", resp)
	}
	a, _ := robot.Action("wave_left")
	last := a.Keyframes[len(a.Keyframes)-1].Positions
	q := st.Robot.Arms[0].Positions()
	for k, i := range []int{arm.ShoulderPan, arm.ShoulderLift, arm.Elbow, arm.WristRoll} {
		// The actuators' PD holds against gravity: kp 80 on the shoulder
		// leaves a few hundredths of a radian.
		if math.Abs(q[i]-last[k]) > 0.05 {
			t.Errorf("%s at %.3f rad after the action, want %.3f", arm.JointName(i), q[i], last[k])
		}
	}
	c, _ := st.Robot.Actuator(0, arm.ShoulderLift).Command()
	m, _ := mitmotor.ModelNamed("ak80_9")
	if math.Abs(c.Kp-80) > 0.2 || math.Abs(c.Position-last[1]) > 2*(m.Position.Max-m.Position.Min)/65535 {
		t.Errorf("shoulder_lift's actuator holds %+v, want kp 80 at %.3f", c, last[1])
	}
}
