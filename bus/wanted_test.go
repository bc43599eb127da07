package bus_test

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// A SubscribeValuesOfWanted subscriber gets a topic's messages only while
// its filter wants them: the others are dropped on the publisher's side,
// neither copied nor queued, and the topics it always wants are not
// affected.
func TestSubscribeValuesOfWanted(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	var watching atomic.Bool
	var asked []string
	got := map[string]int{}
	var values int
	sub, err := bus.SubscribeValuesOfWanted(b, "/test/#", bus.QoS{Depth: 16}, ex, func(m bus.Msg) {
		got[m.Topic]++
		if _, ok := m.Value().(*msg.Image); ok {
			values++
		}
	}, func(topic string) bool {
		asked = append(asked, topic) // called on this goroutine: Publish is synchronous in process
		return topic != "/test/camera" || watching.Load()
	}, reflect.TypeFor[msg.Image]())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	frame := msg.Image{Width: 2, Height: 1, Step: 6, Encoding: msg.ImageRGB8, Data: make([]byte, 6)}
	publish := func() {
		for _, p := range []struct {
			topic string
			v     any
		}{{"/test/camera", frame}, {"/test/state", map[string]int{"n": 1}}} {
			if err := b.Publish(p.topic, p.v); err != nil {
				t.Fatal(err)
			}
		}
		if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	publish()
	if got["/test/camera"] != 0 || got["/test/state"] != 1 {
		t.Fatalf("unwatched: got %v, want only /test/state", got)
	}
	if st := sub.(bus.StatsReporter).Stats(); st.Received != 1 {
		t.Errorf("unwatched: %d received, want 1 (the dropped frame is not counted)", st.Received)
	}
	watching.Store(true)
	publish()
	if got["/test/camera"] != 1 || got["/test/state"] != 2 || values != 1 {
		t.Fatalf("watched: got %v with %d values, want the frame as a value and both states", got, values)
	}
	if want := []string{"/test/camera", "/test/state", "/test/camera", "/test/state"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("filter asked about %v, want %v", asked, want)
	}
}
