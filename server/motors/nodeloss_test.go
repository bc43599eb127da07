package motors_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/motors"
	"github.com/saint-os/saint/server/router"
)

// A node that restarts under a session loses it: the root ends the
// session (state node_lost, naming the node), releases its other groups,
// refuses its holder's next command saying why, and nothing resumes when
// the node is back: a fresh request_control is needed.
func TestNodeRestartEndsSessions(t *testing.T) {
	r := newRig(t)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{11, 21}, TimeoutMS: 5000})
	if !a.Success {
		t.Fatal(a.Message)
	}
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModePosition, MotorIDs: []int{11, 21}, Positions: []float64{0.4, 0.5}})
	if o := r.nodes["arms_left"].out; len(o) == 0 || o[0].Position != 0.4 {
		t.Fatalf("left node before the restart: %+v", o)
	}
	left, right := r.nodes["arms_left"], r.nodes["arms_right"]
	left.stop()
	left.start(t, r.ex)
	r.run(100 * time.Millisecond)

	st := r.last()
	if st.State != motors.StateNodeLost || st.Client != "policy" || !strings.Contains(st.LastError, "the node of arms_left restarted") {
		t.Errorf("root session_status after the left node restarted: state %q client %q last_error %q", st.State, st.Client, st.LastError)
	}
	if ms := r.m.Status(); len(ms.Sessions) != 0 || ms.Groups[0].HeldBy != "" || ms.Groups[1].HeldBy != "" {
		t.Errorf("root after the restart: %+v, want no session and both arms free", ms)
	}
	if right.mw.Active() {
		t.Error("the right arm's node session is still active after the root session ended")
	}
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModePosition, MotorIDs: []int{11}, Positions: []float64{0.9}})
	if st := r.last(); !strings.Contains(st.LastError, "the session ended (the node of arms_left restarted") || !strings.Contains(st.LastError, "request_control") {
		t.Errorf("the holder's command after the restart: last_error %q", st.LastError)
	}
	r.run(time.Second)
	if left.mw.Active() || left.owns {
		t.Errorf("the restarted node: active %v, owns %v; want nothing resumed", left.mw.Active(), left.owns)
	}
	b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{11}, TimeoutMS: 5000})
	if !b.Success {
		t.Fatalf("a fresh request after the restart: %+v", b)
	}
	r.command(msg.ControlCommand{UUID: b.UUID, Mode: msg.ModePosition, MotorIDs: []int{11}, Positions: []float64{0.3}})
	if o := left.out; !left.owns || o[0].Position != 0.3 {
		t.Errorf("the restarted node under the fresh session: owns %v, %+v", left.owns, o)
	}
}

// A node that restarts and is taken there directly by another client
// before the root notices: the root ends its session rather than think it
// still holds the node, and the node's holder is the one named afterwards.
func TestNodeRestartTakenDirectly(t *testing.T) {
	r := newRig(t)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{31}, TimeoutMS: 5000})
	if !a.Success {
		t.Fatal(a.Message)
	}
	head := r.nodes["head"]
	head.stop()
	head.start(t, r.ex)
	// The rogue's request reaches the fresh node before its first status.
	var direct msg.RequestControlResponse
	bus.CallAsyncJSON(r.bus, "/robot_7/saint/head/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "rogue", TimeoutMS: 60000}, time.Second, r.ex, func(v msg.RequestControlResponse, err error) { direct = v })
	r.run(100 * time.Millisecond)
	if !direct.Success {
		t.Fatalf("rogue at the restarted node: %+v", direct)
	}
	st := r.last()
	if st.State != motors.StateNodeLost || !strings.Contains(st.LastError, `the node of head no longer holds this session: it reports active, client "rogue"`) {
		t.Errorf("root session_status: state %q last_error %q", st.State, st.LastError)
	}
	if ms := r.m.Status(); len(ms.Sessions) != 0 || ms.Groups[2].HeldBy != "" {
		t.Errorf("root after the node was taken: %+v", ms)
	}
	b := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "ui", MotorIDs: []int{31}})
	if b.Success || !strings.Contains(b.Message, `head: control is held by client "rogue"`) {
		t.Errorf("request at the root while the rogue holds the node: %+v", b)
	}
}

// A client going to a restarted node directly under the very name the
// root gives its node sessions is still not the root's session: the
// node's status tells sessions apart by their tags.
func TestNodeRestartTakenUnderTheRootsName(t *testing.T) {
	r := newRig(t)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{31}, TimeoutMS: 5000})
	if !a.Success {
		t.Fatal(a.Message)
	}
	r.run(100 * time.Millisecond)
	head := r.nodes["head"]
	head.stop()
	head.start(t, r.ex)
	var direct msg.RequestControlResponse
	bus.CallAsyncJSON(r.bus, "/robot_7/saint/head/"+msg.MotorRequestControl, msg.RequestControlRequest{Client: "saint-server for policy", TimeoutMS: 60000}, time.Second, r.ex, func(v msg.RequestControlResponse, err error) { direct = v })
	r.run(100 * time.Millisecond)
	if !direct.Success {
		t.Fatalf("the impostor at the restarted node: %+v", direct)
	}
	st := r.last()
	if st.State != motors.StateNodeLost || !strings.Contains(st.LastError, `the node of head no longer holds this session: it reports active, client "saint-server for policy"`) {
		t.Errorf("root session_status: state %q last_error %q", st.State, st.LastError)
	}
	if ms := r.m.Status(); len(ms.Sessions) != 0 {
		t.Errorf("root sessions with an impostor at the node: %+v", ms.Sessions)
	}
}

// A node that goes offline under a session (it stops answering): the root
// ends the session once its poll of the node fails, naming the node; when
// the node is back, nothing resumes.
func TestNodeOfflineEndsSessions(t *testing.T) {
	r := newRig(t)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "policy", MotorIDs: []int{31, 21}, TimeoutMS: 60000})
	if !a.Success {
		t.Fatal(a.Message)
	}
	head := r.nodes["head"]
	head.stop()
	// The poll asks every second and gives a node CallTimeout to answer.
	r.run(motors.PollInterval + motors.CallTimeout + 100*time.Millisecond)
	st := r.last()
	if st.State != motors.StateNodeLost || !strings.Contains(st.LastError, "the node of head went offline") {
		t.Errorf("root session_status after the head went offline: state %q last_error %q", st.State, st.LastError)
	}
	ms := r.m.Status()
	if len(ms.Sessions) != 0 || ms.Groups[2].Online || ms.Groups[1].HeldBy != "" {
		t.Errorf("root after the head went offline: %+v", ms)
	}
	if r.nodes["arms_right"].mw.Active() {
		t.Error("the right arm's node session outlived the root session")
	}
	r.command(msg.ControlCommand{UUID: a.UUID, Mode: msg.ModePosition, MotorIDs: []int{21}, Positions: []float64{0.2}})
	if st := r.last(); !strings.Contains(st.LastError, "the session ended (the node of head went offline") {
		t.Errorf("the holder's command after the head went offline: last_error %q", st.LastError)
	}
	head.start(t, r.ex)
	r.run(2 * motors.PollInterval)
	if ms := r.m.Status(); !ms.Groups[2].Online || len(ms.Sessions) != 0 || head.mw.Active() {
		t.Errorf("the head back online: %+v, node active %v; want online and nothing resumed", ms, head.mw.Active())
	}
}

// The router's session over a node that restarts ends at the root and is
// taken again by the router's next Hold, at the fresh node.
func TestRouterRetakesAfterNodeRestart(t *testing.T) {
	r := newRig(t)
	hold := func() error {
		t.Helper()
		err := r.m.Hold("head")
		for i := 0; i < 10 && errors.Is(err, router.ErrHoldPending); i++ {
			r.run(10 * time.Millisecond)
			err = r.m.Hold("head")
		}
		return err
	}
	if err := hold(); err != nil {
		t.Fatal(err)
	}
	head := r.nodes["head"]
	head.stop()
	head.start(t, r.ex)
	r.run(60 * time.Millisecond)
	if st := r.last(); st.State != motors.StateNodeLost || st.Client != "router (head)" {
		t.Errorf("root session_status after the head restarted: %+v", st)
	}
	if err := r.m.Hold("head"); !errors.Is(err, router.ErrHoldPending) {
		t.Errorf("hold after the head restarted: %v, want taken again", err)
	}
	if err := hold(); err != nil {
		t.Fatal(err)
	}
	if !head.mw.Active() {
		t.Error("the router's session is not at the restarted node")
	}
}

// A node that restarts right after granting, before the root saw the
// session in its session_status: its statuses without the session may be
// ones published before the grant for motors.ConfirmWithin, and after that
// they end the root session.
func TestNodeLostBeforeConfirmed(t *testing.T) {
	r := newRig(t)
	// The tracks' node here is a stand-in that grants and then only ever
	// reports no session, as a node restarted just after answering does.
	prefix := "/robot_7" + msg.TopicPrefix(msg.RoleTracks, "")
	if _, err := bus.ServeJSON(r.bus, prefix+"/"+msg.MotorGetAvailableMotors, r.ex, func(_ msg.GetAvailableMotorsRequest, reply func(msg.GetAvailableMotorsResponse, error)) {
		reply(msg.GetAvailableMotorsResponse{MotorIDs: []int{1, 2}, JointNames: []string{"left_track", "right_track"}, Reachable: []bool{true, true}}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.ServeJSON(r.bus, prefix+"/"+msg.MotorRequestControl, r.ex, func(_ msg.RequestControlRequest, reply func(msg.RequestControlResponse, error)) {
		reply(msg.RequestControlResponse{Success: true, UUID: "node-session", Message: "control granted"}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	r.ex.Every(100*time.Millisecond, func() {
		_ = r.bus.Publish(prefix+"/"+msg.MotorSessionStatus, msg.SessionStatus{State: "idle"})
	})
	r.run(motors.PollInterval + 100*time.Millisecond)
	a := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "nav", MotorIDs: []int{41}, TimeoutMS: 60000})
	if !a.Success {
		t.Fatal(a.Message)
	}
	r.run(motors.ConfirmWithin - 300*time.Millisecond)
	if ms := r.m.Status(); len(ms.Sessions) != 1 {
		t.Fatalf("within ConfirmWithin of the grant: %+v, want the session still held", ms.Sessions)
	}
	r.run(500 * time.Millisecond)
	st := r.last()
	if st.State != motors.StateNodeLost || !strings.Contains(st.LastError, "the node of tracks restarted") || len(st.Sessions) != 0 {
		t.Errorf("root session_status after ConfirmWithin: %+v", st)
	}
}
