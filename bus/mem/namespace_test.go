package mem_test

import (
	"errors"
	"testing"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
)

// A namespaced bus behaves like any other.
func TestNamespacedConformance(t *testing.T) {
	bustest.RunConformance(t, func(t *testing.T) (pub, sub bus.Bus) {
		p, s := newPair(t)
		np, err := bus.WithRobotID(p, "7")
		if err != nil {
			t.Fatal(err)
		}
		ns, err := bus.WithRobotID(s, "7")
		if err != nil {
			t.Fatal(err)
		}
		return np, ns
	})
}

func TestNamespaces(t *testing.T) { bustest.RunNamespaces(t, newPair) }

func TestRobotNamespace(t *testing.T) {
	if ns, err := bus.RobotNamespace(""); ns != "" || err != nil {
		t.Errorf("empty id: %q, %v", ns, err)
	}
	if ns, err := bus.RobotNamespace("a-7"); ns != "/robot_a-7" || err != nil {
		t.Errorf("a-7: %q, %v", ns, err)
	}
	for _, id := range []string{"a/b", "x y", "ü"} {
		if _, err := bus.RobotNamespace(id); !errors.Is(err, bus.ErrInvalidName) {
			t.Errorf("robot id %q: %v, want ErrInvalidName", id, err)
		}
	}
	b := mem.NewBroker().Connect(nil)
	if nb, _ := bus.WithRobotID(b, ""); nb != bus.Bus(b) {
		t.Error("no robot id: the bus was wrapped")
	}
}

// BenchmarkPublishNamespaced is BenchmarkPublish/subs=1 with the publisher
// and the subscriber inside a robot namespace.
func BenchmarkPublishNamespaced(b *testing.B) {
	for _, ns := range []string{"", "7"} {
		b.Run("robot_id="+ns, func(b *testing.B) {
			ex := executor.NewVirtual()
			bb, err := bus.WithRobotID(mem.New(), ns)
			if err != nil {
				b.Fatal(err)
			}
			defer bb.Close()
			if _, err := bb.Subscribe("/saint/head/state", bus.QoS{Depth: 1}, ex, func(bus.Msg) {}); err != nil {
				b.Fatal(err)
			}
			type state struct {
				Pan, Tilt, Roll float32
			}
			b.ReportAllocs()
			for b.Loop() {
				bb.Publish("/saint/head/state", state{1, 2, 3})
			}
		})
	}
}
