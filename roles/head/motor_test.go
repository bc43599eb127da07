package head_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

func headCall[Resp any](g *headRig, name string, req any) Resp {
	g.T.Helper()
	var resp Resp
	done := false
	bus.CallAsyncJSON(g.Bus, msg.MotorName(msg.TopicPrefix(msg.RoleHead, ""), name), req, time.Minute, g.Ex, func(v Resp, err error) {
		if err != nil {
			g.T.Error(err)
		}
		resp, done = v, true
	})
	for i := 0; i < 100 && !done; i++ {
		g.Run(10 * time.Millisecond)
	}
	if !done {
		g.T.Fatalf("%s: no answer", name)
	}
	return resp
}

// The head's servos through the motor middleware: a session's POSITION
// goals move the servos (through the motion profile), HeadCommands wait
// for the session to end, what hobby servos cannot do is refused, and
// ZERO_TORQUE_MODE stops the pulses.
func TestHeadMotorMiddleware(t *testing.T) {
	g := newHeadRig(t, nil)
	status := roletest.Collect[msg.SessionStatus](t, g.Bus, g.Ex, "/saint/head/session_status")
	g.Run(100 * time.Millisecond)
	av := headCall[msg.GetAvailableMotorsResponse](g, msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{})
	if len(av.MotorIDs) != 3 || av.JointNames[1] != "tilt" || !av.Reachable[2] {
		t.Errorf("get_available_motors: %+v", av)
	}
	d := headCall[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "x", Behavior: msg.BehaviorDamping})
	if d.Success || !strings.Contains(d.Message, "DAMPING_MODE needs torque-controlled actuators") {
		t.Errorf("DAMPING_MODE on hobby servos: %+v", d)
	}
	s := headCall[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", Behavior: msg.BehaviorZeroTorque, TimeoutMS: 400})
	if !s.Success {
		t.Fatal(s.Message)
	}
	for range 10 {
		g.Publish("/saint/head/control_command", msg.ControlCommand{UUID: s.UUID, Mode: msg.ModePosition, Positions: []float64{0.5, -0.3, 2}})
		g.Run(100 * time.Millisecond)
	}
	// Roll is clamped to its ±45° limit.
	for i, want := range []float64{0.5 / headDegree, -0.3 / headDegree, 45} {
		p := headServos[i]
		if a, on := g.servoAngle(p); !on || math.Abs(a-want) > max(1e-6, p.resolution) {
			t.Errorf("%v: %.3f° (on %v), want %.3f°", p, a, on, want)
		}
	}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 0, Speed: 1})
	g.Publish("/saint/head/control_command", msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeTorque, Torques: []float64{0, 0, 0}})
	g.Run(100 * time.Millisecond)
	if a, _ := g.servoAngle(headServos[0]); math.Abs(a-0.5/headDegree) > 1e-6 {
		t.Errorf("a HeadCommand during the session moved pan to %.2f°", a)
	}
	if last := (*status)[len(*status)-1]; !strings.Contains(last.LastError, "TORQUE needs torque-controlled actuators") {
		t.Errorf("TORQUE on hobby servos: %q", last.LastError)
	}
	if z := headCall[msg.ResetZeroResponse](g, msg.MotorResetZero, msg.ResetZeroRequest{}); z.Success {
		t.Errorf("reset_zero on hobby servos: %+v", z)
	}
	// The session times out into ZERO_TORQUE_MODE: no pulses.
	g.Run(600 * time.Millisecond)
	for _, p := range headServos {
		if _, _, on := g.servoPWM(p); on {
			t.Errorf("%v still pulsing after ZERO_TORQUE_MODE", p)
		}
	}
	// A HeadCommand takes the head back.
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 10, Speed: 1})
	g.Run(time.Second)
	if a, on := g.servoAngle(headServos[0]); !on || math.Abs(a-10) > 1e-6 {
		t.Errorf("after a HeadCommand pan at %.2f° (on %v), want 10°", a, on)
	}
}
