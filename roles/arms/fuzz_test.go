package arms_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

// Whatever arrives on the arm's command topics — any JSON, any number of
// joints, any numbers — the arm neither panics nor reports a joint
// outside the limits it advertises.
func FuzzCommand(f *testing.F) {
	for _, c := range []msg.ArmCommand{{TargetPositions: []float32{10, 20, 30}, SpeedFactor: 0.5},
		{TargetPositions: []float32{1e9, -1e9, 0, 0, 0, 0, 0, 0}, SpeedFactor: 2, Immediate: true}} {
		b, _ := json.Marshal(c)
		f.Add(b, false)
	}
	f.Add([]byte(`{"position": 0.5, "force": 1e30}`), true)
	f.Add([]byte(`{"target_positions": "all", "speed_factor": -1}`), false)
	g := newArmRigWith(f, false, nil)
	limits := roletest.Collect[msg.CommandLimits](f, g.Bus, g.Ex, msg.LimitsTopic(g.prefix))
	g.Run(rolekit.LimitsPeriod) // the limits of the start went before Collect
	if len(*limits) == 0 {
		f.Fatal("the arm advertised no limits")
	}
	l := (*limits)[0]
	f.Fuzz(func(t *testing.T, data []byte, gripper bool) {
		if !json.Valid(data) {
			return // the bus carries JSON only
		}
		topic := msg.ArmCmdTopic(msg.ArmLeft)
		if gripper {
			topic = msg.GripperCmdTopic(msg.ArmLeft)
		}
		if err := g.Bus.Publish(topic, json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
		roletest.Run(t, g.Ex, 60*time.Millisecond)
		s := g.states[len(g.states)-1]
		for i, p := range s.JointPositions {
			lim, ok := l.Limit(fmt.Sprintf("joint_%d", i))
			// The servos report where they are: at worst a little past a
			// limit they were driven to (their own settling).
			if x := float64(p); math.IsNaN(x) || ok && (x < lim.Min-5 || x > lim.Max+5) {
				t.Fatalf("after %s: joint %d at %g°, limits [%g, %g]", data, i, x, lim.Min, lim.Max)
			}
		}
	})
}
