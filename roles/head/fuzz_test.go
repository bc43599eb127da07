package head_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

// Whatever arrives on the head's command topic — any JSON, any numbers —
// the head neither panics nor aims outside the limits it advertises: its
// motion target stays finite and within them.
func FuzzCommand(f *testing.F) {
	for _, c := range []msg.HeadCommand{{Pan: 45, Tilt: -15, Speed: 0.5}, {Pan: 1e9, Tilt: -1e9, Roll: 90, Speed: 7},
		{Jaw: 2, EyesPan: 90, EyesTilt: -90}} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Add([]byte(`{"pan": "left", "tilt": null}`))
	f.Add([]byte(`{"pan": 1e400}`))
	f.Add([]byte(`[1, 2, 3]`))
	g := newHeadRig(f, nil)
	limits := roletest.Collect[msg.CommandLimits](f, g.Bus, g.Ex, msg.LimitsTopic("/saint/head"))
	motion := roletest.Collect[msg.HeadMotion](f, g.Bus, g.Ex, msg.TopicHeadMotion)
	g.Run(rolekit.LimitsPeriod + 100*time.Millisecond) // the limits of the start went before Collect
	if len(*limits) == 0 {
		f.Fatal("the head advertised no limits")
	}
	l := (*limits)[0]
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // the bus carries JSON only
		}
		*motion = (*motion)[:0]
		if err := g.Bus.Publish(msg.TopicHeadCmd, json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
		roletest.Run(t, g.Ex, 60*time.Millisecond)
		if len(*motion) == 0 {
			t.Fatal("the head stopped publishing its motion")
		}
		m := (*motion)[len(*motion)-1]
		for field, v := range map[string]float32{"pan": m.Target.Pan, "tilt": m.Target.Tilt, "roll": m.Target.Roll} {
			lim, _ := l.Limit(field)
			if x := float64(v); math.IsNaN(x) || x < lim.Min-1e-4 || x > lim.Max+1e-4 {
				t.Fatalf("after %s: %s target %g outside [%g, %g]", data, field, x, lim.Min, lim.Max)
			}
		}
		if s := float64(m.Speed); !(s > 0 && s <= 1) {
			t.Fatalf("after %s: speed %g", data, s)
		}
	})
}
