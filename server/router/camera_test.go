package router

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router/target"
)

// cameraRoutes pass WebSocket and ROS 2 commands through.
const cameraRoutes = `
routes:
  - id: websocket_direct
    enabled: true
    priority: 200
    input: {source: websocket, command_types: [move, camera]}
    output: {target: "*"}
    mapping: passthrough
  - id: ros2_direct
    enabled: true
    priority: 150
    input: {source: ros2, command_types: [move, camera]}
    output: {target: "*"}
    mapping: passthrough
`

// The camera's holders are counted across sources: the ROS 2 bridge
// (one party), WebSocket clients and Foxglove (Holder); the head is told
// off only when the last one lets go, and a holder letting go of what it
// does not hold changes nothing for the others.
func TestCameraHolders(t *testing.T) {
	rg := newRig(t, cameraRoutes)
	camera := func(source, holder string, on bool) {
		t.Helper()
		v := 0.0
		if on {
			v = 1
		}
		if err := rg.submit(Input{Source: source, Holder: holder, Target: target.Head, Command: target.CommandCamera,
			Values: map[string]float64{"enable": v}}); err != nil {
			t.Fatal(err)
		}
	}
	cmds := func() []bool {
		var out []bool
		for _, c := range decodeAll[msg.HeadCameraCommand](rg, msg.TopicHeadCameraCmd) {
			out = append(out, c.Enable)
		}
		rg.reset()
		return out
	}
	holders := func(want ...string) {
		t.Helper()
		var got []string
		rg.do(func() { got = rg.r.CameraHolders() })
		if !slices.Equal(got, want) {
			t.Fatalf("holders %q, want %q", got, want)
		}
	}
	camera(msg.SourceROS2, "", true)
	camera(msg.SourceWebSocket, "websocket client 3", true)
	if got := cmds(); !slices.Equal(got, []bool{true, true}) {
		t.Fatalf("two claims sent %v, want on at each", got)
	}
	holders("ros2", "websocket client 3")
	camera(msg.SourceWebSocket, "foxglove", false) // holds nothing
	camera(msg.SourceROS2, "", false)
	if got := cmds(); len(got) != 0 {
		t.Fatalf("releases while a WebSocket client holds the camera sent %v, want nothing", got)
	}
	holders("websocket client 3")
	camera(msg.SourceWebSocket, "websocket client 3", false)
	if got := cmds(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("the last release sent %v, want off", got)
	}
	holders()
	// Off with nobody holding it still reaches the head (a camera on
	// that the router never saw come on by itself).
	camera(msg.SourceWebSocket, "websocket client 4", false)
	if got := cmds(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("off with no holder sent %v, want off", got)
	}

	// A holder that goes away is released.
	done := make(chan struct{})
	camera(msg.SourceWebSocket, "websocket client 5", true)
	rg.do(func() { rg.r.watchCameraHolder("websocket client 5", done) })
	cmds()
	close(done)
	// The release is posted from the waiting goroutine.
	bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		var n int
		rg.do(func() { n = len(rg.r.CameraHolders()) })
		if n != 0 {
			return errors.New("the holder that went away still holds the camera")
		}
		return nil
	})
	if got := cmds(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("the holder going away sent %v, want off", got)
	}
}

// A held camera that goes off under its holders (the head node restarted)
// or is off when the head comes back is turned on again, once each time;
// a camera nobody holds is left off.
func TestCameraBackOnAfterHeadRestart(t *testing.T) {
	rg := newRig(t, cameraRoutes)
	state := func(active bool) {
		t.Helper()
		if err := rg.bus.Publish(msg.TopicHeadState, msg.HeadState{CameraActive: active}); err != nil {
			t.Fatal(err)
		}
		rg.run(0)
	}
	cmds := func() []bool {
		var out []bool
		for _, c := range decodeAll[msg.HeadCameraCommand](rg, msg.TopicHeadCameraCmd) {
			out = append(out, c.Enable)
		}
		rg.reset()
		return out
	}
	if err := rg.submit(Input{Source: msg.SourceWebSocket, Holder: "websocket client 3", Target: target.Head, Command: target.CommandCamera,
		Values: map[string]float64{"enable": 1}}); err != nil {
		t.Fatal(err)
	}
	cmds()
	state(false) // the head's first state, before it took the command
	if got := cmds(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("the head appeared with the held camera off: sent %v, want on once", got)
	}
	state(false)
	state(true)
	state(true)
	if got := cmds(); len(got) != 0 {
		t.Fatalf("the head's camera following: sent %v, want nothing", got)
	}
	state(false) // the head restarted
	state(false)
	if got := cmds(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("the held camera went off: sent %v, want on once", got)
	}
	rg.run(3 * time.Second) // the head is gone a while and comes back
	state(false)
	state(false)
	if got := cmds(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("the head came back with the held camera off: sent %v, want on once", got)
	}
	state(true)
	if err := rg.submit(Input{Source: msg.SourceWebSocket, Holder: "websocket client 3", Target: target.Head, Command: target.CommandCamera,
		Values: map[string]float64{"enable": 0}}); err != nil {
		t.Fatal(err)
	}
	state(false)
	rg.run(3 * time.Second)
	state(false)
	if got := cmds(); !slices.Equal(got, []bool{false}) {
		t.Fatalf("released, the camera going off: sent %v, want only the off", got)
	}
}

// A camera the head started by itself (camera_autostart) is held by
// AutostartHolder: another holder's coming and going, and a release by
// someone who holds nothing, leave it on; the claim goes when the head
// comes back with its camera off (no longer autostarting).
func TestCameraAutostartHolds(t *testing.T) {
	rg := newRig(t, cameraRoutes)
	state := func(active bool) {
		t.Helper()
		if err := rg.bus.Publish(msg.TopicHeadState, msg.HeadState{CameraActive: active}); err != nil {
			t.Fatal(err)
		}
		rg.run(0)
	}
	camera := func(holder string, on bool) {
		t.Helper()
		v := 0.0
		if on {
			v = 1
		}
		if err := rg.submit(Input{Source: msg.SourceWebSocket, Holder: holder, Target: target.Head, Command: target.CommandCamera,
			Values: map[string]float64{"enable": v}}); err != nil {
			t.Fatal(err)
		}
	}
	cmds := func() []bool {
		var out []bool
		for _, c := range decodeAll[msg.HeadCameraCommand](rg, msg.TopicHeadCameraCmd) {
			out = append(out, c.Enable)
		}
		rg.reset()
		return out
	}
	holders := func(want ...string) {
		t.Helper()
		var got []string
		rg.do(func() { got = rg.r.CameraHolders() })
		if !slices.Equal(got, want) {
			t.Fatalf("holders %q, want %q", got, want)
		}
	}
	state(true) // the head appears with its camera on, held by nobody
	holders(AutostartHolder)
	camera("websocket client 4", false) // holds nothing
	camera("foxglove", true)
	camera("foxglove", false)
	if got := cmds(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("claims and releases under autostart sent %v, want only foxglove's on", got)
	}
	holders(AutostartHolder)
	rg.run(3 * time.Second) // the head restarts with the same configuration
	state(true)
	holders(AutostartHolder)
	rg.run(3 * time.Second) // and again without camera_autostart
	state(false)
	holders()
	if got := cmds(); len(got) != 0 {
		t.Fatalf("the head came back without autostart: sent %v, want nothing", got)
	}
	state(true) // turned on while the head is up: not an autostart
	holders()

	// A client holding the camera when the head appears with it off and
	// autostart's claim: the claim goes, the client's stays and the
	// camera is turned on again for it.
	rg.run(3 * time.Second)
	state(true)
	holders(AutostartHolder)
	camera("websocket client 5", true)
	cmds()
	rg.run(3 * time.Second)
	state(false)
	holders("websocket client 5")
	if got := cmds(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("the head came back with the held camera off: sent %v, want on once", got)
	}
}
