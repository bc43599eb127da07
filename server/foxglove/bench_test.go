package foxglove_test

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/msg"
)

// BenchmarkFanout publishes odometry (the robot's 50 Hz topic, ~700 bytes
// of JSON) to clients subscribed over real WebSocket connections on
// loopback and waits until every client has read every message: one op is
// one message delivered to all of them. The clients' reading runs in the
// same process, so the CPU per op is an upper bound of the server's.
//
//	go test -run '^$' -bench Fanout -benchmem ./server/foxglove
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(map[int]string{1: "clients=1", 10: "clients=10"}[n], func(b *testing.B) { benchFanout(b, n) })
	}
}

func benchFanout(b *testing.B, clients int) {
	f := newFixture(b, "")
	var odom msg.Odometry
	odom.Header.FrameID, odom.ChildFrameID = "odom", "base_link"
	odom.Pose.Pose.Orientation.W = 1
	_ = f.bus.Publish(msg.TopicTracksOdom, odom)
	var id uint32
	for deadline := time.Now().Add(5 * time.Second); id == 0 && time.Now().Before(deadline); {
		for _, ch := range f.srv.Channels() {
			if ch.Topic == msg.TopicTracksOdom {
				id = ch.ID
			}
		}
		time.Sleep(time.Millisecond)
	}
	if id == 0 {
		b.Fatal("odometry not advertised")
	}
	got := make([]atomic.Int64, clients)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range clients {
		d := websocket.Dialer{Subprotocols: []string{"foxglove.websocket.v1"}}
		conn, _, err := d.Dial("ws://"+f.addr+"/", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		if err := conn.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}}); err != nil {
			b.Fatal(err)
		}
		go func() {
			for ctx.Err() == nil {
				typ, m, err := conn.ReadMessage()
				if err != nil {
					return
				}
				if typ == websocket.BinaryMessage && m[0] == 1 && binary.LittleEndian.Uint32(m[1:]) == 1 {
					got[i].Add(1)
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // subscriptions in place
	waitAll := func(n int64) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			low := n
			for i := range got {
				low = min(low, got[i].Load())
			}
			if low >= n {
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
		b.Fatalf("clients did not receive %d messages", n)
	}
	b.ResetTimer()
	for i := range b.N {
		_ = f.bus.Publish(msg.TopicTracksOdom, odom)
		// Stay within the bus's keep-last queue (best effort, 256), which
		// would otherwise drop what the executor has not yet fanned out.
		if i%64 == 63 {
			waitAll(int64(i + 1 - 64))
		}
	}
	waitAll(int64(b.N))
	b.StopTimer()
	if f.srv.Stats().Dropped > 0 {
		b.Errorf("%d frames dropped", f.srv.Stats().Dropped)
	}
}
