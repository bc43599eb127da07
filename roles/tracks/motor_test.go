package tracks_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

// call calls one of the tracks' middleware services.
func call[Resp any](g *tracksRig, name string, req any) Resp {
	g.T.Helper()
	var resp Resp
	done := false
	bus.CallAsyncJSON(g.Bus, "/saint/tracks/"+name, req, time.Second, g.Ex, func(v Resp, err error) {
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

// The tracks' drives are motors of the middleware: a session drives them
// with VELOCITY through the tracks' own limits, cmd_vel is refused
// meanwhile, and a session gone quiet stops them.
func TestTracksMiddlewareSession(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	av := call[msg.GetAvailableMotorsResponse](g, msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{})
	if len(av.MotorIDs) != 2 || av.JointNames[0] != "left_track" || av.JointNames[1] != "right_track" {
		t.Fatalf("get_available_motors: %+v", av)
	}
	keep := call[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "x", Behavior: msg.BehaviorKeep})
	if keep.Success || !strings.Contains(keep.Message, "KEEP_MODE") {
		t.Errorf("KEEP_MODE on the tracks: %+v, want refused", keep)
	}
	s := call[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "planner", TimeoutMS: 300})
	if !s.Success {
		t.Fatalf("request_control: %+v", s)
	}
	// 0.4 m/s on both tracks: 8 rad/s of a 50 mm sprocket.
	const radps = 0.4 / 0.05
	for i := 0; i < 20; i++ {
		g.Publish("/saint/tracks/"+msg.MotorControlCommand, msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeVelocity, Velocities: []float64{radps, radps}})
		// A teleoperation source's cmd_vel is refused meanwhile.
		g.Publish(msg.TopicTracksCmdVel, msg.Twist{Angular: msg.Vector3{Z: 1}})
		g.Run(100 * time.Millisecond)
	}
	tr := g.lastTruth()
	if math.Abs(tr.Speed-0.4) > 0.02 || math.Abs(tr.YawRate) > 0.02 {
		t.Fatalf("under the session the base runs %.3f m/s, %.3f rad/s; want 0.4 m/s straight", tr.Speed, tr.YawRate)
	}
	if acc, at := maxAccel(g.truth, 20*time.Millisecond, 0, g.now()); acc > maxLinearAccel*accelMargin {
		t.Errorf("acceleration %.3f m/s² at %v: the session bypassed the ramp (limit %.1f)", acc, at, maxLinearAccel)
	}
	// The session goes quiet: its timeout (300 ms) and DAMPING_MODE stop
	// the base within the ramp (0.4 s) and some settling.
	stopFrom := g.now()
	g.Run(1500 * time.Millisecond)
	if tr := g.lastTruth(); math.Abs(tr.Speed) > 0.01 {
		t.Errorf("%v after the last command the base runs %.3f m/s, want stopped", g.now()-stopFrom, tr.Speed)
	}
	// Ended, the tracks take cmd_vel again.
	g.drive(0.3, 0, 1500*time.Millisecond)
	if tr := g.lastTruth(); math.Abs(tr.Speed-0.3) > 0.02 {
		t.Errorf("after the session a cmd_vel drives the base at %.3f m/s, want 0.3", tr.Speed)
	}
}

// An emergency stop during a session stops the tracks, and its release
// does not restart them on the session's old speeds.
func TestTracksSessionEStop(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	s := call[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "planner", TimeoutMS: 5000, Behavior: msg.BehaviorZeroTorque})
	if !s.Success {
		t.Fatalf("request_control: %+v", s)
	}
	g.Publish("/saint/tracks/"+msg.MotorControlCommand, msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeVelocity, Velocities: []float64{6, 6}})
	g.Run(time.Second)
	if tr := g.lastTruth(); tr.Speed < 0.25 {
		t.Fatalf("the session's command drives the base at %.3f m/s, want 0.3", tr.Speed)
	}
	g.Publish(msg.TopicTracksEStop, msg.EStop{Active: true, Source: "test"})
	g.Run(1500 * time.Millisecond)
	g.Publish(msg.TopicTracksEStop, msg.EStop{Active: false, Source: "test"})
	g.Run(1500 * time.Millisecond)
	if tr := g.lastTruth(); math.Abs(tr.Speed) > 0.01 {
		t.Errorf("after the e-stop's release the base runs %.3f m/s without a fresh command", tr.Speed)
	}
	// A fresh command drives again; the release into ZERO_TORQUE_MODE
	// coasts: both H-bridges disabled.
	g.Publish("/saint/tracks/"+msg.MotorControlCommand, msg.ControlCommand{UUID: s.UUID, Mode: msg.ModeVelocity, Velocities: []float64{6, 6}})
	g.Run(time.Second)
	if tr := g.lastTruth(); tr.Speed < 0.25 {
		t.Errorf("a fresh command after the release drives the base at %.3f m/s, want 0.3", tr.Speed)
	}
	r := call[msg.ReleaseControlResponse](g, msg.MotorReleaseControl, msg.ReleaseControlRequest{UUID: s.UUID})
	if !r.Success {
		t.Fatalf("release_control: %+v", r)
	}
	g.Run(100 * time.Millisecond)
	if !g.enablesLow() {
		t.Errorf("released into ZERO_TORQUE_MODE: the H-bridges are still enabled")
	}
	// A session under role commands (as the router takes one): its
	// cmd_vel drive the coasting tracks again.
	rc := call[msg.RequestControlResponse](g, msg.MotorRequestControl, msg.RequestControlRequest{Client: "router (tracks)", Behavior: msg.BehaviorDamping, RoleCommands: true})
	if !rc.Success {
		t.Fatalf("request_control with role commands: %+v", rc)
	}
	g.drive(0.3, 0, 1500*time.Millisecond)
	if tr := g.lastTruth(); math.Abs(tr.Speed-0.3) > 0.02 {
		t.Errorf("cmd_vel under a role-commands session after coasting: %.3f m/s, want 0.3", tr.Speed)
	}
}
