package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

// The whole robot: every motor role's motors listed at the root; two
// competitors for the tracks: the router (a ROS 2
// client's cmd_vel, through its route) and a client of the root motor
// middleware. Each excludes the other with a refusal naming the holder; an
// emergency stop ends the router's session and stops the base; the
// client's session drives the real tracks with VELOCITY; its timeout stops
// them; then the router drives again.
func TestTracksRouterAndClientSessions(t *testing.T) {
	st := startAdopted(t)
	run := func(d time.Duration) {
		t.Helper()
		if err := st.Exec.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	b := st.Broker.Connect(nil)
	var speed float64 // the tracks' measured speed (TrackState)
	if _, err := bus.SubscribeJSON(b, msg.TopicTracksState, bus.QoS{Depth: 16}, st.Exec, func(_ string, s msg.TrackState) {
		speed = (float64(s.LeftVelocity) + float64(s.RightVelocity)) / 2
	}); err != nil {
		t.Fatal(err)
	}
	var statuses []msg.SessionStatus
	if _, err := bus.SubscribeJSON(b, "/"+msg.MotorSessionStatus, bus.QoS{Depth: 64}, st.Exec, func(_ string, s msg.SessionStatus) { statuses = append(statuses, s) }); err != nil {
		t.Fatal(err)
	}
	call := func(name string, req, resp any) {
		t.Helper()
		done := false
		bus.CallAsyncJSON(b, name, req, 5*time.Second, st.Exec, func(r json.RawMessage, err error) {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if err := json.Unmarshal(r, resp); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			done = true
		})
		for i := 0; i < 100 && !done; i++ {
			run(20 * time.Millisecond)
		}
		if !done {
			t.Fatalf("%s: no answer", name)
		}
	}
	// Every motor role's motors are at the root: the arms', the head's,
	// the tracks' and the balancing base's wheels.
	var av msg.GetAvailableMotorsResponse
	for range 10 {
		call("/"+msg.MotorGetAvailableMotors, msg.GetAvailableMotorsRequest{}, &av)
		if len(av.MotorIDs) == 17 {
			break
		}
		run(500 * time.Millisecond)
	}
	want := []int{11, 12, 13, 14, 15, 21, 22, 23, 24, 25, 31, 32, 33, 41, 42, 51, 52}
	if fmt.Sprint(av.MotorIDs) != fmt.Sprint(want) || av.JointNames[13] != "left_track" || av.JointNames[16] != "right_wheel" || !av.Reachable[16] {
		t.Fatalf("get_available_motors: %+v, want the motors %v", av, want)
	}
	drive := func(v float64) {
		_ = b.Publish(msg.TopicRouterInput, msg.RouterInput{Source: msg.SourceROS2, Target: "tracks", Command: "drive", Values: map[string]float32{"linear": float32(v)}})
	}
	// The router drives the tracks for a ROS 2 client.
	for range 20 {
		drive(0.3)
		run(100 * time.Millisecond)
	}
	if math.Abs(speed-0.3) > 0.03 {
		t.Fatalf("driven through the router: %.3f m/s, want 0.3", speed)
	}
	var req msg.RequestControlResponse
	call("/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "nav", MotorIDs: []int{41, 42}, TimeoutMS: 400}, &req)
	if req.Success || !strings.Contains(req.Message, `held by client "router (tracks)"`) {
		t.Fatalf("a client asking for the tracks while the router drives them: %+v", req)
	}
	// An emergency stop: the router's session ends, the base stops.
	drive(0.3)
	_ = b.Publish(msg.TopicRouterInput, msg.RouterInput{Source: msg.SourceROS2, Target: "tracks", Command: "drive", Values: map[string]float32{"estop": 1}})
	run(1500 * time.Millisecond)
	if math.Abs(speed) > 0.02 {
		t.Errorf("after the e-stop the tracks run at %.3f m/s", speed)
	}
	call("/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "nav", MotorIDs: []int{41, 42}, TimeoutMS: 400}, &req)
	if req.Success || !strings.Contains(req.Message, "emergency stop") {
		t.Errorf("request_control during the e-stop: %+v", req)
	}
	var sys msg.SystemCommandResponse
	call(msg.ServiceSystemCommand, msg.SystemCommandRequest{Command: msg.CommandClearEStop}, &sys)
	run(200 * time.Millisecond)
	// The client takes the tracks; the router's drive is not sent.
	call("/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "nav", MotorIDs: []int{41, 42}, TimeoutMS: 400}, &req)
	if !req.Success {
		t.Fatalf("request_control after the e-stop: %+v", req)
	}
	const radps = 0.2 / 0.05 // 0.2 m/s on 50 mm sprockets
	for range 20 {
		_ = b.Publish("/"+msg.MotorControlCommand, msg.ControlCommand{UUID: req.UUID, Mode: msg.ModeVelocity, MotorIDs: []int{41, 42}, Velocities: []float64{radps, radps}})
		drive(-0.3) // the router's source competes, and loses
		run(100 * time.Millisecond)
	}
	if math.Abs(speed-0.2) > 0.03 {
		t.Fatalf("driven by the client's session against the router: %.3f m/s, want 0.2", speed)
	}
	// The client falls silent: its session times out at the tracks
	// (DAMPING_MODE: stop) and at the root.
	from := len(statuses)
	run(1500 * time.Millisecond)
	timedOut := false
	for _, s := range statuses[from:] {
		timedOut = timedOut || s.State == "timed_out" && s.Client == "nav" && s.Applied == msg.BehaviorDamping
	}
	if math.Abs(speed) > 0.02 || !timedOut {
		t.Errorf("after the client's timeout: %.3f m/s, session timed out into DAMPING_MODE: %v; want stopped, timed out", speed, timedOut)
	}
	// The router drives again.
	for range 20 {
		drive(-0.2)
		run(100 * time.Millisecond)
	}
	if math.Abs(speed+0.2) > 0.03 {
		t.Errorf("the router after the client's session: %.3f m/s, want -0.2", speed)
	}
}
