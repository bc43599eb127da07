package balance_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

// Whatever arrives on the base's cmd_vel and e-stop topics — any JSON,
// any numbers — the balance role neither panics nor publishes a state
// that is not finite.
func FuzzCommand(f *testing.F) {
	b, _ := json.Marshal(msg.Twist{Linear: msg.Vector3{X: 0.2}, Angular: msg.Vector3{Z: -0.3}})
	f.Add(b, false)
	f.Add([]byte(`{"linear": {"x": 1e308}, "angular": {"z": -1e308}}`), false)
	f.Add([]byte(`{"active": true, "source": "rc"}`), true)
	f.Add([]byte(`{"active": "yes"}`), true)
	g := newBalanceRig(f, nil)
	states := roletest.Collect[msg.BalanceState](f, g.Bus, g.Ex, msg.TopicBalanceState)
	g.Run(200 * time.Millisecond)
	f.Fuzz(func(t *testing.T, data []byte, estop bool) {
		if !json.Valid(data) {
			return // the bus carries JSON only
		}
		topic := msg.TopicBalanceCmdVel
		if estop {
			topic = msg.TopicPrefix(msg.RoleBalance, "") + "/estop"
		}
		*states = (*states)[:0]
		if err := g.Bus.Publish(topic, json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
		roletest.Run(t, g.Ex, 150*time.Millisecond)
		if len(*states) == 0 {
			t.Fatal("the base stopped publishing its state")
		}
		s := reflect.ValueOf((*states)[len(*states)-1])
		for i := 0; i < s.NumField(); i++ {
			if v := s.Field(i); v.CanFloat() && (math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0)) {
				t.Fatalf("after %s: %s = %v", data, s.Type().Field(i).Name, v.Float())
			}
		}
	})
}
