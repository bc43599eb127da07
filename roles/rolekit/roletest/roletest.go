// Package roletest holds what the role packages' tests share: the robot's
// role configurations from fixtures, and a collector of bus messages. It
// does not import the simulator, so the role packages stay within the
// import rule; the tests bring the simulated robot themselves.
package roletest

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
)

// Config parses the fixtures' role configuration key ("head",
// "arms_left"), named key+".yaml" in its errors.
func Config(t testing.TB, key string) *roleconfig.Config {
	t.Helper()
	data, err := fs.ReadFile(fixtures.Config(), "roles/"+key+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := roleconfig.ParseFile(key+".yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Collect subscribes to topic and returns the slice the decoded messages
// land in.
func Collect[T any](t testing.TB, b bus.Bus, ex *executor.Executor, topic string) *[]T {
	t.Helper()
	var got []T
	if _, err := bus.SubscribeJSON(b, topic, bus.QoS{Depth: 1000}, ex, func(_ string, v T) { got = append(got, v) }); err != nil {
		t.Fatal(err)
	}
	return &got
}

// Run runs ex's virtual clock forward by d.
func Run(t testing.TB, ex *executor.Executor, d time.Duration) {
	t.Helper()
	if err := ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// Rig is what every role test rig holds: the test, the executor the role
// runs on (virtual time) and the bus it talks on.
type Rig struct {
	T   testing.TB
	Ex  *executor.Executor
	Bus bus.Bus
}

// Run runs the rig's virtual clock forward by d.
func (r Rig) Run(d time.Duration) {
	r.T.Helper()
	Run(r.T, r.Ex, d)
}

// Publish publishes v on topic.
func (r Rig) Publish(topic string, v any) {
	r.T.Helper()
	Publish(r.T, r.Bus, topic, v)
}

// Publish publishes v on topic, failing the test on an error.
func Publish(t testing.TB, b bus.Bus, topic string, v any) {
	t.Helper()
	if err := b.Publish(topic, v); err != nil {
		t.Fatal(err)
	}
}
