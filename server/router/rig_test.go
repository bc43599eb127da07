package router

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/fstest"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// stamped is a message seen on the bus and the virtual time it arrived.
type stamped struct {
	at   time.Time
	data json.RawMessage
}

// rig is a router on the in-process bus and a virtual-clock executor,
// with a recorder on every output topic.
type rig struct {
	t   testing.TB
	ex  *executor.Executor
	bus *mem.Bus
	r   *Router
	got map[string][]stamped
}

// recorded topics: the outputs and the status.
var outputTopics = []string{
	msg.TopicHeadCmd, msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCmdTopic(msg.ArmRight),
	msg.GripperCmdTopic(msg.ArmLeft), msg.GripperCmdTopic(msg.ArmRight),
	msg.TopicTracksCmdVel, msg.TopicTracksEStop, msg.TopicRouterStatus, msg.TopicHeadCameraCmd,
	"/saint/balance/estop", msg.TopicBalanceCmdVel, msg.TopicBalanceArm,
}

// newRig starts a router whose default preset is cfg (YAML).
func newRig(t testing.TB, cfg string) *rig {
	t.Helper()
	return newRigOpts(t, Options{Presets: fstest.MapFS{"default.yaml": {Data: []byte(cfg)}}})
}

func newRigOpts(t testing.TB, o Options) *rig {
	t.Helper()
	rg := &rig{t: t, ex: executor.NewVirtual(), bus: mem.New(), got: map[string][]stamped{}}
	t.Cleanup(func() { _ = rg.bus.Close() })
	o.Exec, o.Bus = rg.ex, rg.bus
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	rg.r = r
	for _, topic := range outputTopics {
		topic := topic
		if _, err := rg.bus.Subscribe(topic, bus.QoS{Depth: 100000}, rg.ex, func(m bus.Msg) {
			rg.got[topic] = append(rg.got[topic], stamped{at: rg.ex.Now(), data: append(json.RawMessage(nil), m.Data...)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	rg.do(func() {
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
	})
	return rg
}

// do runs f on the executor now, and what it caused.
func (rg *rig) do(f func()) {
	rg.ex.Post(f)
	rg.run(0)
}

// run advances virtual time by d.
func (rg *rig) run(d time.Duration) {
	if err := rg.ex.RunFor(context.Background(), d); err != nil {
		rg.t.Fatal(err)
	}
}

func (rg *rig) submit(in Input) error {
	var err error
	rg.do(func() { err = rg.r.Submit(in) })
	return err
}

// reset forgets what was recorded.
func (rg *rig) reset() { rg.got = map[string][]stamped{} }

func decodeAll[T any](rg *rig, topic string) []T {
	rg.t.Helper()
	var out []T
	for _, s := range rg.got[topic] {
		var v T
		if err := json.Unmarshal(s.data, &v); err != nil {
			rg.t.Fatalf("%s: %v", topic, err)
		}
		out = append(out, v)
	}
	return out
}

func (rg *rig) heads() []msg.HeadCommand { return decodeAll[msg.HeadCommand](rg, msg.TopicHeadCmd) }
func (rg *rig) twists() []msg.Twist      { return decodeAll[msg.Twist](rg, msg.TopicTracksCmdVel) }
func (rg *rig) estops() []msg.EStop      { return decodeAll[msg.EStop](rg, msg.TopicTracksEStop) }
func (rg *rig) statuses() []msg.RouteStatus {
	return decodeAll[msg.RouteStatus](rg, msg.TopicRouterStatus)
}

// every feeds in every period until the returned stop is called.
func (rg *rig) every(period time.Duration, in func() Input) (stop func()) {
	var tm *executor.Timer
	rg.do(func() {
		tm = rg.ex.Every(period, func() { _ = rg.r.Submit(in()) })
	})
	return func() { rg.do(func() { tm.Stop() }) }
}

func face(vals map[string]float64) Input {
	return Input{Source: msg.SourceLiveLink, Subject: "FaceCapture", Type: msg.SubjectFace, Values: vals}
}

func wsCmd(target, command string, vals map[string]float64) Input {
	return Input{Source: msg.SourceWebSocket, Target: target, Command: command, Values: vals}
}

// headRoutes: face capture at 100 and WebSocket passthrough at 200.
const headRoutes = `
blending: {mode: %s, blend_time_ms: 200, source_timeout_ms: 500}
routes:
  - id: facecap_to_head
    enabled: true
    priority: 100
    input: {source: livelink, subject: FaceCapture, type: face}
    output: {target: head}
    mapping:
      - {from: headYaw, to: pan, scale: 1.0, clamp: [-180, 180]}
  - id: websocket_direct
    enabled: true
    priority: 200
    input: {source: websocket, command_types: [move, home, drive, stop, gripper, camera]}
    output: {target: "*"}
    mapping: passthrough
  - id: rc_drive
    enabled: true
    priority: 300
    input: {source: rc}
    output: {target: tracks}
    mapping:
      - {from: channel_2, to: linear}
      - {from: channel_1, to: angular}
  - id: rc_estop
    enabled: true
    priority: 1000
    input: {source: rc}
    output: {target: tracks}
    mapping:
      - {from: channel_6, to: estop, mode: switch, inverted: true}
`
