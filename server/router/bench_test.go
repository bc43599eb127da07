package router

import (
	"fmt"
	"log/slog"
	"testing"
	"testing/fstest"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/server/router/target"
)

// BenchmarkSubmitToPublish measures a WebSocket head move from Submit to
// its HeadCommand handled by a subscriber on the mem bus: routing, JSON
// encoding, bus delivery and decoding, on one executor.
func BenchmarkSubmitToPublish(b *testing.B) {
	rg := newRigOpts(b, Options{Log: slog.New(slog.DiscardHandler),
		Presets: fstest.MapFS{"default.yaml": {Data: []byte(fmt.Sprintf(headRoutes, "priority"))}}})
	got := 0
	if _, err := bus.SubscribeJSON(rg.bus, msg.TopicHeadCmd, bus.QoS{Depth: 16}, rg.ex, func(_ string, h msg.HeadCommand) {
		got++
	}); err != nil {
		b.Fatal(err)
	}
	in := wsCmd(target.Head, target.CommandMove, map[string]float64{"pan": 45, "tilt": -15, "speed": 0.5})
	submit := func() { _ = rg.r.Submit(in) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rg.ex.Post(submit)
		rg.run(0)
	}
	b.StopTimer()
	if got < b.N {
		b.Fatalf("%d head commands for %d submits", got, b.N)
	}
}

// BenchmarkTick measures one output tick with every target driven: a
// face capture frame to the head, RC to the tracks, and both arms by
// WebSocket, in blend mode.
func BenchmarkTick(b *testing.B) {
	rg := newRigOpts(b, Options{Log: slog.New(slog.DiscardHandler),
		Presets: fstest.MapFS{"default.yaml": {Data: []byte(fmt.Sprintf(headRoutes, "blend"))}}})
	tick := time.Second / DefaultTickHz
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rg.ex.Post(func() {
			_ = rg.r.Submit(face(map[string]float64{"headYaw": float64(i % 90)}))
			_ = rg.r.Submit(Input{Source: msg.SourceRC, Values: map[string]float64{"channel_1": 0.1, "channel_2": 0.5, "channel_6": 1}})
		})
		rg.run(tick)
		rg.reset()
	}
}

// BenchmarkTickPoseTargets measures one output tick with both arms'
// pose targets driven by LiveLink transform subjects moving a little
// every tick: two inverse kinematics solutions from the last ones.
func BenchmarkTickPoseTargets(b *testing.B) {
	rg := newRigOpts(b, Options{Log: slog.New(slog.DiscardHandler),
		Presets: fstest.MapFS{"default.yaml": {Data: []byte(vrRoutes + `
  - id: vr_right_hand
    enabled: true
    priority: 100
    input: {source: livelink, subject: VR_Controller_R, type: transform}
    output: {target: arms.right.pose}
    mapping:
      - {from: x, to: x}
      - {from: y, to: y}
      - {from: z, to: z}
      - {from: qw, to: qw}
      - {from: qx, to: qx}
      - {from: qy, to: qy}
      - {from: qz, to: qz}
`)}}})
	left, right := kinematics.DefaultArm(msg.ArmLeft), kinematics.DefaultArm(msg.ArmRight)
	tick := time.Second / DefaultTickHz
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := 0.01 * float64(i%20)
		l := left.Forward([]float64{0.3 + d, 0.8, -1.1, 0.4, 0.2})
		r := right.Forward([]float64{-0.3 - d, 0.8, -1.1, 0.4, -0.2})
		rg.ex.Post(func() {
			_ = rg.r.Submit(transformInput("VR_Controller_L", l, nil))
			_ = rg.r.Submit(transformInput("VR_Controller_R", r, nil))
		})
		rg.run(tick)
		rg.reset()
	}
}
