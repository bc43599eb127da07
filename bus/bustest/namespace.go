package bustest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
)

// RunNamespaces checks that robot namespaces (bus.WithRobotID) isolate
// robots sharing one broker: each robot sees only its own topics, under
// its own names, and reaches only its own services, while a connection
// outside every namespace sees them all under "/robot_{id}/...".
func RunNamespaces(t *testing.T, newPair NewPair) {
	pub, raw := newPair(t)
	ex := RunExecutor(t)
	r1, err := bus.WithRobotID(pub, "1")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := bus.WithRobotID(pub, "2")
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]*Recorder{"r1": {}, "r2": {}, "raw": {}}
	subscribe(t, r1, "/saint/#", bus.QoS{Depth: 100}, ex, rec["r1"].Handler)
	subscribe(t, r2, "/saint/#", bus.QoS{Depth: 100}, ex, rec["r2"].Handler)
	subscribe(t, raw, "/robot_1/#", bus.QoS{Depth: 100}, ex, rec["raw"].Handler)
	subscribe(t, raw, "/robot_2/#", bus.QoS{Depth: 100}, ex, rec["raw"].Handler)
	serve(t, r1, "/request_control", ex, func(m bus.Msg, reply bus.Reply) { reply(m.Topic, nil) })
	if err := r1.Publish("/saint/head/cmd", 1); err != nil {
		t.Fatal(err)
	}
	if err := r2.Publish("/saint/head/state", 2); err != nil {
		t.Fatal(err)
	}
	rec["raw"].WaitLen(t, 2)
	rec["r1"].WaitLen(t, 1)
	rec["r2"].WaitLen(t, 1)
	time.Sleep(50 * time.Millisecond) // anything misrouted would arrive now
	want := map[string][]string{
		"r1":  {"/saint/head/cmd"},
		"r2":  {"/saint/head/state"},
		"raw": {"/robot_1/saint/head/cmd", "/robot_2/saint/head/state"},
	}
	for name, w := range want {
		got := rec[name].Topics()
		slices.Sort(got)
		if !slices.Equal(got, w) {
			t.Errorf("%s saw %v, want %v", name, got, w)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var topic string
	if err := r1.Call(ctx, "/request_control", nil, &topic); err != nil || topic != "/request_control" {
		t.Errorf("robot 1 calling its own service: %q, %v (want the name without the namespace)", topic, err)
	}
	if err := r2.Call(ctx, "/request_control", nil, nil); !errors.Is(err, bus.ErrNoResponders) {
		t.Errorf("robot 2 calling robot 1's service: %v, want ErrNoResponders", err)
	}
	topic = ""
	if err := raw.Call(ctx, "/robot_1/request_control", nil, &topic); err != nil || topic != "/request_control" {
		t.Errorf("calling /robot_1/request_control from outside: %q, %v (want robot 1 to see its own name)", topic, err)
	}
	// A wildcard service matches names inside its namespace only, and
	// learns each request's name without the namespace.
	serve(t, r1, "/saint/nodes/+/validate", ex, func(m bus.Msg, reply bus.Reply) { reply(m.Topic, nil) })
	for _, c := range []struct {
		b    bus.Bus
		name string
	}{{r1, "/saint/nodes/a/validate"}, {raw, "/robot_1/saint/nodes/b/validate"}} {
		topic = ""
		if err := c.b.Call(ctx, c.name, nil, &topic); err != nil || topic != strings.TrimPrefix(c.name, "/robot_1") {
			t.Errorf("calling %s: %q, %v (want the name inside robot 1's namespace)", c.name, topic, err)
		}
	}
	if err := r2.Call(ctx, "/saint/nodes/a/validate", nil, nil); !errors.Is(err, bus.ErrNoResponders) {
		t.Errorf("robot 2 calling robot 1's wildcard service: %v, want ErrNoResponders", err)
	}
	serve(t, r2, "/fails", ex, func(m bus.Msg, reply bus.Reply) { reply(nil, fmt.Errorf("no")) })
	var re *bus.RemoteError
	if err := r2.Call(ctx, "/fails", nil, nil); !errors.As(err, &re) || re.Service != "/fails" {
		t.Errorf("a remote error inside the namespace: %v, want one naming /fails", err)
	}
}
