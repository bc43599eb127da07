package balance_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

// wheelRadPerS is the wheel speed of a ground speed (wheel_radius_m
// 0.0825 in balance.yaml).
func wheelRadPerS(v float64) float64 { return v / 0.0825 }

// callMW calls one of the base's middleware services.
func callMW[Resp any](g *balanceRig, name string, req any) Resp {
	g.T.Helper()
	var resp Resp
	done := false
	bus.CallAsyncJSON(g.Bus, msg.TopicPrefix(msg.RoleBalance, "")+"/"+name, req, time.Second, g.Ex, func(v Resp, err error) {
		if err != nil {
			g.T.Errorf("%s: %v", name, err)
		}
		resp, done = v, true
	})
	g.Run(50 * time.Millisecond)
	if !done {
		g.T.Fatalf("%s: no answer", name)
	}
	return resp
}

// The base's drive is a motor of the middleware, exposed as a speed
// request its balancing loop honours: a session's wheel speeds drive the
// armed base under its speed cap, raw torque and letting go are refused,
// and a quiet session stops it balancing.
func TestBalanceMiddlewareSession(t *testing.T) {
	g := newBalanceRig(t, nil)
	av := callMW[msg.GetAvailableMotorsResponse](g, msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{})
	if len(av.MotorIDs) != 2 || av.JointNames[0] != "left_wheel" {
		t.Fatalf("get_available_motors: %+v", av)
	}
	zt := callMW[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "x", Behavior: msg.BehaviorZeroTorque})
	if zt.Success || !strings.Contains(zt.Message, "the base would fall") {
		t.Errorf("ZERO_TORQUE_MODE: %+v, want refused", zt)
	}
	g.mustArm()
	if r := g.console("speed_limit 20"); !r.OK {
		t.Fatalf("speed_limit: %+v", r)
	}
	s := callMW[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "nav", TimeoutMS: 300})
	if !s.Success {
		t.Fatalf("request_control: %+v", s)
	}
	topic := msg.TopicPrefix(msg.RoleBalance, "") + "/" + msg.MotorControlCommand
	// Raw wheel torque is refused: only the loop puts torque on the wheels.
	status := roletest.Collect[msg.SessionStatus](t, g.Bus, g.Ex, msg.TopicPrefix(msg.RoleBalance, "")+"/"+msg.MotorSessionStatus)
	g.Publish(topic, msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeTorque, Torques: []float64{5, 5}})
	g.Run(100 * time.Millisecond)
	if n := len(*status); n == 0 || !strings.Contains((*status)[n-1].LastError, `mode: "TORQUE": these motors are speed-controlled drives`) {
		t.Errorf("TORQUE on the base's wheels: not refused (%d session_status)", n)
	}
	// 1 m/s asked of both wheels: the 20 % cap allows 0.4.
	x0, _ := g.robot.Balance.Position()
	tm := g.Ex.Every(50*time.Millisecond, func() {
		g.Publish(topic, msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeVelocity, Velocities: []float64{wheelRadPerS(1), wheelRadPerS(1)}})
		// The router's cmd_vel is refused meanwhile.
		g.Publish(msg.TopicBalanceCmdVel, msg.Twist{Linear: msg.Vector3{X: -1}})
	})
	g.Run(5 * time.Second)
	tm.Stop()
	x1, v := g.robot.Balance.Position()
	if math.Abs(v-0.4) > 0.1 || x1-x0 < 1 || math.Abs(g.state.TargetSpeed-0.4) > 1e-9 {
		t.Errorf("driven by the session: %.3f m/s, travelled %.2f m, target %.3f; want 0.4 (capped), forward", v, x1-x0, g.state.TargetSpeed)
	}
	if !g.state.Armed {
		t.Fatal("the base fell or disarmed under the session")
	}
	// Quiet: the session times out into DAMPING_MODE, the base stands.
	g.Run(4 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v) > 0.08 || !g.state.Armed {
		t.Errorf("after the session's timeout: %.3f m/s, armed %v; want standing, balancing", v, g.state.Armed)
	}
	// Handed back: the router's cmd_vel drives again.
	tm = g.Ex.Every(50*time.Millisecond, func() { g.Publish(msg.TopicBalanceCmdVel, msg.Twist{Linear: msg.Vector3{X: -1}}) })
	defer tm.Stop()
	g.Run(3 * time.Second)
	if _, v := g.robot.Balance.Position(); v > -0.2 || g.state.Source != "bus" {
		t.Errorf("cmd_vel after the session: %.3f m/s from %q, want backwards from bus", v, g.state.Source)
	}
}
