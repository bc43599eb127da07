package tracks_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

// Whatever arrives on cmd_vel — any JSON, any numbers — the tracks
// neither panic nor run a track faster than the limits they advertise
// allow, and their state stays finite.
func FuzzCmdVel(f *testing.F) {
	for _, c := range []msg.Twist{{Linear: msg.Vector3{X: 0.5}, Angular: msg.Vector3{Z: -0.2}},
		{Linear: msg.Vector3{X: 1e9, Y: 3}, Angular: msg.Vector3{X: 1, Z: -1e9}}} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Add([]byte(`{"linear": {"x": "fast"}}`))
	f.Add([]byte(`{"linear": {"x": 1e400}}`))
	f.Add([]byte(`null`))
	g := newTracksRig(f, nil)
	limits := roletest.Collect[msg.CommandLimits](f, g.Bus, g.Ex, msg.LimitsTopic("/saint/tracks"))
	g.Run(rolekit.LimitsPeriod + 100*time.Millisecond) // the limits of the start went before Collect
	if len(*limits) == 0 {
		f.Fatal("the tracks advertised no limits")
	}
	l := (*limits)[0]
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // the bus carries JSON only
		}
		if err := g.Bus.Publish(msg.TopicTracksCmdVel, json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
		roletest.Run(t, g.Ex, 40*time.Millisecond)
		s := g.lastState()
		for _, v := range []float32{s.LeftVelocity, s.RightVelocity, s.LeftCurrent, s.RightCurrent} {
			if x := float64(v); math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("after %s: state %+v", data, s)
			}
		}
		var c msg.Twist
		if json.Unmarshal(data, &c) == nil && !math.IsNaN(c.Linear.X) && !math.IsNaN(c.Angular.Z) {
			v, w := l.ClampTwist(c.Linear.X, c.Angular.Z)
			if need := math.Abs(v) + math.Abs(w)*l.HalfGauge + l.TurnSlip; need > l.MaxTrackSpeed+1e-9 {
				t.Fatalf("after %s: the limits let a track run at %g m/s, over %g", data, need, l.MaxTrackSpeed)
			}
		}
	})
}
