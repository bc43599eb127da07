package heartbeat_test

import (
	"context"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/heartbeat"
	"github.com/saint-os/saint/server/ws"
)

// The heartbeat runs from Start to Stop at msg.HeartbeatInterval on the
// executor's clock, counting up from 1.
func TestHeartbeatFromStartToStop(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	h := feature.NewHost(feature.Options{Gateway: ws.New(ws.Options{}), Exec: ex, Bus: b})
	heartbeat.Register(h)
	var got []msg.ServerHeartbeat
	if _, err := bus.SubscribeJSON(b, msg.TopicServerHeartbeat, bus.QoS{Depth: 1000}, ex, func(_ string, m msg.ServerHeartbeat) {
		got = append(got, m)
	}); err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration) {
		t.Helper()
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	run(time.Second)
	if len(got) != 0 {
		t.Fatalf("%d heartbeats before Start", len(got))
	}
	ex.Post(func() {
		for _, c := range h.Components() {
			if err := c.Start(); err != nil {
				t.Error(err)
			}
		}
	})
	run(time.Second - time.Millisecond)
	if len(got) != 20 {
		t.Fatalf("%d heartbeats in a second, want 20", len(got))
	}
	for i, m := range got {
		if m.Seq != uint64(i+1) {
			t.Fatalf("heartbeat %d has seq %d", i, m.Seq)
		}
	}
	ex.Post(func() {
		for _, c := range h.Components() {
			c.Stop()
		}
	})
	run(time.Second)
	if len(got) > 21 {
		t.Errorf("%d heartbeats after Stop, want none", len(got)-20)
	}
}
