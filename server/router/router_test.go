package router

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router/target"
)

func TestHeadMoveReachesHeadAtOnce(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	if err := rg.submit(wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 45, "tilt": -15, "speed": 0.5})); err != nil {
		t.Fatal(err)
	}
	hs := rg.heads()
	if len(hs) != 1 {
		t.Fatalf("head commands before any tick: %d, want 1 (a command is sent at once)", len(hs))
	}
	want := msg.HeadCommand{Pan: 45, Tilt: -15, Speed: 0.5}
	if hs[0] != want {
		t.Fatalf("head command %+v, want %+v", hs[0], want)
	}
	// While the source is fresh the tick repeats it; then it stops.
	rg.run(400 * time.Millisecond)
	n := len(rg.heads())
	if n < 15 || n > 22 {
		t.Fatalf("%d head commands in 400 ms at 50 Hz, want about 21", n)
	}
	rg.run(time.Second)
	if m := len(rg.heads()); m > n+6 {
		t.Fatalf("head commands kept coming after the source timed out: %d → %d", n, m)
	}
	last := rg.heads()[len(rg.heads())-1]
	if last != want {
		t.Fatalf("last head command %+v, want %+v", last, want)
	}
}

func TestHigherPriorityOverridesAndTimeoutHandsOver(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	stopFace := rg.every(20*time.Millisecond, func() Input { return face(map[string]float64{"headYaw": 10}) })
	defer stopFace()
	rg.run(100 * time.Millisecond)
	if hs := rg.heads(); len(hs) == 0 || hs[len(hs)-1].Pan != 10 {
		t.Fatalf("face capture alone: head %v, want pan 10", hs)
	}
	// WebSocket (200) overrides LiveLink (100) while it is fresh.
	if err := rg.submit(wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 50})); err != nil {
		t.Fatal(err)
	}
	rg.reset()
	rg.run(400 * time.Millisecond)
	for i, h := range rg.heads() {
		if h.Pan != 50 {
			t.Fatalf("head command %d while WebSocket is active: pan %v, want 50", i, h.Pan)
		}
	}
	// 500 ms after its command the WebSocket source times out and face
	// capture has the head again.
	rg.reset()
	rg.run(300 * time.Millisecond)
	hs := rg.heads()
	if len(hs) == 0 || hs[len(hs)-1].Pan != 10 {
		t.Fatalf("after the WebSocket source timed out: last head %v, want pan 10", hs)
	}
	switched := -1
	for i, h := range hs {
		if h.Pan == 10 {
			switched = i
			break
		}
	}
	at := rg.got[msg.TopicHeadCmd][switched].at
	// The command was 700 ms ago; the hand-over is at the first tick more
	// than source_timeout_ms after it.
	if d := at.Sub(rg.ex.Now().Add(-700 * time.Millisecond)); d <= 500*time.Millisecond || d > 520*time.Millisecond {
		t.Fatalf("hand-over %v after the WebSocket command, want in (500 ms, 520 ms]", d)
	}
}

func TestBlendRampsMonotonically(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "blend"))
	stopFace := rg.every(20*time.Millisecond, func() Input { return face(map[string]float64{"headYaw": 10}) })
	defer stopFace()
	rg.run(100 * time.Millisecond)
	rg.reset()
	// WebSocket holds pan 50 for a second (commands every 100 ms).
	first := rg.ex.Now().Add(100 * time.Millisecond)
	stopWS := rg.every(100*time.Millisecond, func() Input {
		return wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 50})
	})
	rg.run(time.Second)
	stopWS()
	up := rg.got[msg.TopicHeadCmd]
	checkRamp(t, "up", rg.heads(), 10, 50)
	// The ramp takes blend_time_ms: 50 is reached 200 ms (± a tick) after
	// the first WebSocket command.
	for i, h := range rg.heads() {
		if h.Pan == 50 {
			if d := up[i].at.Sub(first); d < 180*time.Millisecond || d > 220*time.Millisecond {
				t.Fatalf("pan reached 50 after %v, want about 200 ms", d)
			}
			break
		}
	}
	// The WebSocket source times out and the head blends back to 10.
	rg.reset()
	rg.run(time.Second)
	checkRamp(t, "down", rg.heads(), 50, 10)
}

// checkRamp checks the pans go monotonically from from to to in steps no
// larger than one tick's share of the ramp (50 Hz over 200 ms: a tenth).
func checkRamp(t *testing.T, name string, hs []msg.HeadCommand, from, to float32) {
	t.Helper()
	if len(hs) < 10 {
		t.Fatalf("%s: only %d head commands", name, len(hs))
	}
	maxStep := math.Abs(float64(to-from))/10 + 1e-3
	prev := from
	intermediate := 0
	for i, h := range hs {
		step := float64(h.Pan - prev)
		if math.Abs(step) > math.Abs(maxStep) || step*float64(to-from) < -1e-6 {
			t.Fatalf("%s: command %d: pan %v after %v: step %v, want monotone steps of at most %v", name, i, h.Pan, prev, step, maxStep)
		}
		if h.Pan != from && h.Pan != to {
			intermediate++
		}
		prev = h.Pan
	}
	if hs[len(hs)-1].Pan != to {
		t.Fatalf("%s: ends at %v, want %v", name, hs[len(hs)-1].Pan, to)
	}
	if intermediate < 8 {
		t.Fatalf("%s: %d intermediate values, want a ramp of about 9", name, intermediate)
	}
}

func TestAdditiveSumsActiveRoutes(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "additive"))
	stop := rg.every(20*time.Millisecond, func() Input { return face(map[string]float64{"headYaw": 10}) })
	defer stop()
	rg.run(50 * time.Millisecond)
	if err := rg.submit(wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 5, "tilt": 20})); err != nil {
		t.Fatal(err)
	}
	rg.run(50 * time.Millisecond)
	hs := rg.heads()
	if got := hs[len(hs)-1]; got.Pan != 15 || got.Tilt != 20 {
		t.Fatalf("additive head %+v, want pan 10 + 5, tilt 20", got)
	}
	// The WebSocket source times out: pan is face capture's alone, tilt,
	// which nothing drives now, stays where it was.
	rg.run(time.Second)
	hs = rg.heads()
	if got := hs[len(hs)-1]; got.Pan != 10 || got.Tilt != 20 {
		t.Fatalf("after the time-out: head %+v, want pan 10, tilt 20", got)
	}
}

func TestTracksStopWhenSourceTimesOut(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	if err := rg.submit(wsCmd(target.Tracks, target.CommandDrive, map[string]float64{"linear": 0.5, "angular": 0.1})); err != nil {
		t.Fatal(err)
	}
	rg.run(2 * time.Second)
	tw := rg.twists()
	if tw[0].Linear.X != 0.5 || tw[0].Angular.Z != 0.1 {
		t.Fatalf("first twist %+v, want linear 0.5 angular 0.1", tw[0])
	}
	if last := tw[len(tw)-1]; last != (msg.Twist{}) {
		t.Fatalf("last twist %+v after the source timed out, want zero", last)
	}
	// Exactly one zero, then silence.
	zeros := 0
	for _, x := range tw {
		if x == (msg.Twist{}) {
			zeros++
		}
	}
	if zeros != 1 {
		t.Fatalf("%d zero twists, want one when the source times out", zeros)
	}
}

func TestEStopWinsAndLatches(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	// The RC transmitter drives the tracks, switch 6 up (run).
	rc := map[string]float64{"channel_1": 0, "channel_2": 0.8, "channel_6": 1}
	stopRC := rg.every(20*time.Millisecond, func() Input {
		vals := map[string]float64{}
		for k, v := range rc {
			vals[k] = v
		}
		return Input{Source: msg.SourceRC, Values: vals}
	})
	defer stopRC()
	rg.run(100 * time.Millisecond)
	if tw := rg.twists(); len(tw) == 0 || tw[len(tw)-1].Linear.X != 0.8 {
		t.Fatalf("RC drive: %v, want linear 0.8", tw)
	}
	// A safety source engages the e-stop: zero velocity and the estop
	// topic at once, before any tick.
	rg.reset()
	if err := rg.submit(Input{Source: msg.SourceSafety, Command: target.CommandEStop}); err != nil {
		t.Fatal(err)
	}
	if tw := rg.twists(); len(tw) != 1 || tw[0] != (msg.Twist{}) {
		t.Fatalf("twists at the e-stop: %v, want one zero", tw)
	}
	if es := rg.estops(); len(es) != 1 || !es[0].Active || es[0].Source != msg.SourceSafety {
		t.Fatalf("estop messages %v, want one active from safety", es)
	}
	if es := decodeAll[msg.EStop](rg, "/saint/balance/estop"); len(es) != 1 || !es[0].Active {
		t.Fatalf("balance estop messages %v, want one active", es)
	}
	// Nothing moves while it is latched, whatever the priority: RC keeps
	// driving, WebSocket commands the head.
	if err := rg.submit(wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 30})); err != nil {
		t.Fatal(err)
	}
	rg.run(2 * time.Second)
	for i, tw := range rg.twists() {
		if tw != (msg.Twist{}) {
			t.Fatalf("twist %d during the e-stop: %+v, want zero", i, tw)
		}
	}
	if hs := rg.heads(); len(hs) != 0 {
		t.Fatalf("head commands during the e-stop: %v", hs)
	}
	// Released explicitly, the RC drive resumes.
	rg.reset()
	rg.do(func() { rg.r.ClearEStop("test") })
	rg.run(100 * time.Millisecond)
	if es := rg.estops(); len(es) != 1 || es[0].Active {
		t.Fatalf("estop messages at release: %v, want one inactive", es)
	}
	if tw := rg.twists(); len(tw) == 0 || tw[len(tw)-1].Linear.X != 0.8 {
		t.Fatalf("after release: %v, want linear 0.8 again", tw)
	}
	// The RC emergency switch (channel 6 low) engages it from a route.
	rg.reset()
	rc["channel_6"] = 0
	rg.run(100 * time.Millisecond)
	if es := rg.estops(); len(es) != 1 || !es[0].Active || es[0].Source != msg.SourceRC {
		t.Fatalf("RC switch: estop messages %v, want one active from rc", es)
	}
	// Switching back up does not release it: it is latched.
	rc["channel_6"] = 1
	rg.reset()
	rg.run(500 * time.Millisecond)
	for i, tw := range rg.twists() {
		if tw != (msg.Twist{}) {
			t.Fatalf("twist %d after the switch went back up: %+v, want zero (latched)", i, tw)
		}
	}
	var active bool
	rg.do(func() { active = rg.r.EStopActive() })
	if !active {
		t.Fatal("e-stop released by the switch going back up")
	}
}

func TestStateMachineInRouteStatus(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	states := func() []string {
		var out []string
		for _, s := range rg.statuses() {
			if len(out) == 0 || out[len(out)-1] != s.State {
				out = append(out, s.State)
			}
		}
		return out
	}
	stop := rg.every(20*time.Millisecond, func() Input { return face(map[string]float64{"headYaw": 1}) })
	rg.run(100 * time.Millisecond)
	if err := rg.submit(wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 2})); err != nil {
		t.Fatal(err)
	}
	rg.run(time.Second)
	stop()
	rg.run(time.Second)
	want := []string{msg.RouterIdle, msg.RouterRouting, msg.RouterBlending, msg.RouterRouting, msg.RouterIdle}
	if got := states(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("states %v, want %v", got, want)
	}
	// While both were active the head output listed both, highest first.
	found := false
	for _, s := range rg.statuses() {
		if s.State == msg.RouterBlending {
			for _, o := range s.Outputs {
				if o.Target == target.Head && fmt.Sprint(o.RouteIDs) == "[websocket_direct facecap_to_head]" && o.State == msg.RouterBlending {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("no BLENDING status listing websocket_direct over facecap_to_head")
	}
}

func TestNoRouteAndDisabledRoutes(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	if err := rg.submit(Input{Source: msg.SourceAutonomous, Values: map[string]float64{"x": 1}}); !errors.Is(err, ErrNoRoute) {
		t.Fatalf("input no route takes: %v, want ErrNoRoute", err)
	}
	rg.do(func() { rg.r.routes[rg.r.routeIndex("websocket_direct")].Enabled = false })
	if err := rg.submit(wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 1})); !errors.Is(err, ErrNoRoute) {
		t.Fatalf("command to a disabled route: %v, want ErrNoRoute", err)
	}
	if len(rg.heads()) != 0 {
		t.Fatal("a disabled route sent a head command")
	}
}

func TestBusInputsFeedTheRouter(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	publish := func(topic string, v any) {
		rg.do(func() {
			if err := rg.bus.Publish(topic, v); err != nil {
				t.Error(err)
			}
		})
	}
	publish(msg.TopicLiveLinkFrames, msg.LiveLinkFrame{SubjectName: "FaceCapture", SubjectType: msg.SubjectFace,
		PropertyNames: []string{"headYaw", "jawOpen"}, PropertyValues: []float32{-20, 0.5}})
	rg.run(40 * time.Millisecond)
	if hs := rg.heads(); len(hs) == 0 || hs[0].Pan != -20 {
		t.Fatalf("LiveLink frame on the bus: head %v, want pan -20", hs)
	}
	publish(msg.TopicRCState, msg.RCReceiverState{Protocol: msg.RCProtocolSBUS, Connected: true, Channels: []msg.RCChannelState{
		{ChannelNumber: 1, Normalized: -0.25}, {ChannelNumber: 2, Normalized: 0.5}, {ChannelNumber: 6, Normalized: 1}}})
	rg.run(40 * time.Millisecond)
	if tw := rg.twists(); len(tw) == 0 || tw[0].Linear.X != 0.5 || tw[0].Angular.Z != -0.25 {
		t.Fatalf("RC state on the bus: twists %v, want linear 0.5 angular -0.25", tw)
	}
	// A receiver in failsafe gives no input.
	rg.reset()
	publish(msg.TopicRCState, msg.RCReceiverState{Connected: true, Failsafe: true, Channels: []msg.RCChannelState{{ChannelNumber: 6, Normalized: 0}}})
	rg.run(40 * time.Millisecond)
	if len(rg.estops()) != 0 {
		t.Fatal("an RC state in failsafe was routed")
	}
	publish(msg.TopicRouterInput, msg.RouterInput{Source: msg.SourceSafety, Command: target.CommandEStop, Values: map[string]float32{"enable": 1}})
	if es := rg.estops(); len(es) != 1 || !es[0].Active {
		t.Fatalf("RouterInput estop on the bus: %v", es)
	}
}

func TestArmsAndGripperOutputs(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	if err := rg.submit(wsCmd(target.ArmsRight, target.CommandMove, map[string]float64{"joint_0": 10, "joint_2": -5, "speed": 0.5})); err != nil {
		t.Fatal(err)
	}
	arms := decodeAll[msg.ArmCommand](rg, msg.ArmCmdTopic(msg.ArmRight))
	if len(arms) != 1 || fmt.Sprint(arms[0].TargetPositions) != "[10 0 -5]" || arms[0].SpeedFactor != 0.5 {
		t.Fatalf("arm commands %+v, want [10 0 -5] at 0.5", arms)
	}
	if err := rg.submit(wsCmd(target.ArmsRight, target.CommandGripper, map[string]float64{"gripper": 0.25, "gripper_force": 5})); err != nil {
		t.Fatal(err)
	}
	gr := decodeAll[msg.GripperCommand](rg, msg.GripperCmdTopic(msg.ArmRight))
	if len(gr) != 1 || gr[0] != (msg.GripperCommand{Position: 0.25, Force: 5}) {
		t.Fatalf("gripper commands %+v", gr)
	}
	if len(rg.got[msg.ArmCmdTopic(msg.ArmLeft)]) != 0 {
		t.Fatal("the left arm was sent a command for the right")
	}
}

func TestConsoleOverrideOutranksRoutesButNotSafety(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	publish := func(topic string, v any) {
		rg.do(func() {
			if err := rg.bus.Publish(topic, v); err != nil {
				t.Error(err)
			}
		})
	}
	// The RC transmitter (300) drives the tracks.
	stopRC := rg.every(20*time.Millisecond, func() Input {
		return Input{Source: msg.SourceRC, Values: map[string]float64{"channel_2": 0.8, "channel_6": 1}}
	})
	defer stopRC()
	rg.run(100 * time.Millisecond)
	// The console takes over, and keeps sending.
	override := msg.ConsoleOverride{Active: true, Target: target.Tracks, Values: map[string]float32{"linear": 0.1}}
	publish(msg.TopicConsoleOverride, override)
	rg.reset()
	for i := 0; i < 5; i++ {
		rg.run(100 * time.Millisecond)
		publish(msg.TopicConsoleOverride, override)
	}
	for i, tw := range rg.twists() {
		if math.Abs(tw.Linear.X-0.1) > 1e-6 {
			t.Fatalf("twist %d under the console override: %+v, want linear 0.1", i, tw)
		}
	}
	// Released, the RC transmitter has the tracks again at once.
	publish(msg.TopicConsoleOverride, msg.ConsoleOverride{Active: false, Target: target.Tracks})
	if tw := rg.twists(); tw[len(tw)-1].Linear.X != 0.8 {
		t.Fatalf("after the console released: %+v, want linear 0.8", tw[len(tw)-1])
	}
	// The console's e-stop button stops everything, override or not.
	publish(msg.TopicConsoleOverride, override)
	rg.reset()
	publish(msg.TopicConsoleInput, msg.ConsoleInput{Control: ConsoleEStopControl, Kind: msg.InputButton, Event: msg.EventPress, Value: 1})
	rg.run(200 * time.Millisecond)
	if es := rg.estops(); len(es) != 1 || !es[0].Active || es[0].Source != SourceConsole {
		t.Fatalf("console e-stop: %v", es)
	}
	for i, tw := range rg.twists() {
		if tw != (msg.Twist{}) {
			t.Fatalf("twist %d after the console e-stop: %+v", i, tw)
		}
	}
}
