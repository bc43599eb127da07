package foxglove_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/foxglove"
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
	bustest.WaitUntil(b, 5*time.Second, "odometry to be advertised", func() bool {
		for _, ch := range f.srv.Channels() {
			if ch.Topic == msg.TopicTracksOdom {
				id = ch.ID
			}
		}
		return id != 0
	})
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
	// The server reports no event when a client's subscribe takes effect.
	time.Sleep(100 * time.Millisecond) // subscriptions in place
	waitAll := func(n int64) {
		bustest.CheckFor(b, 10*time.Second, 50*time.Microsecond, func() error {
			for i := range got {
				if got[i].Load() < n {
					return fmt.Errorf("clients did not receive %d messages", n)
				}
			}
			return nil
		})
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

// BenchmarkCameraFrame sends head camera frames (640×480 rgb8, 0.9 MB)
// to one Foxglove client subscribed to the camera over a real WebSocket
// on loopback, one frame in flight at a time: one op is one frame
// published on the bus, as the head role publishes it (a value, on the
// executor), until the client has read it. publish-ns/op is the part
// spent in the publish on the executor, where the simulation runs: what a
// frame costs the robot, whatever the Foxglove server does afterwards off
// the executor.
//
//	go test -run '^$' -bench CameraFrame -benchmem ./server/foxglove
func BenchmarkCameraFrame(b *testing.B) {
	const w, h = 640, 480
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	bb := mem.New()
	defer bb.Close()
	srv, err := foxglove.New(foxglove.Options{Bus: bb, Exec: ex, OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw,
		Set: func(context.Context, bool) error { return nil }}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	var id uint32
	for _, ch := range srv.Channels() {
		if ch.Topic == msg.TopicHeadCameraImageRaw {
			id = ch.ID
		}
	}
	d := websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}}
	conn, _, err := d.Dial("ws://"+addr+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteJSON(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}}); err != nil {
		b.Fatal(err)
	}
	var got atomic.Int64
	var size atomic.Int64
	go func() {
		for {
			typ, m, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if typ == websocket.BinaryMessage && m[0] == 1 && binary.LittleEndian.Uint32(m[1:]) == 1 {
				size.Store(int64(len(m)))
				got.Add(1)
			}
		}
	}()
	data := make([]byte, 3*w*h)
	for i := range data {
		data[i] = byte(i * 7)
	}
	img := msg.Image{Header: msg.Header{FrameID: "head_camera"}, Width: w, Height: h, Encoding: msg.ImageRGB8, Step: 3 * w, Data: data}
	var publishing time.Duration
	publish := func() {
		if err := ex.Do(ctx, func() {
			t0 := time.Now()
			_ = bb.Publish(msg.TopicHeadCameraImageRaw, img)
			publishing += time.Since(t0)
		}); err != nil {
			b.Fatal(err)
		}
	}
	wait := func(n int64) {
		bustest.CheckFor(b, 10*time.Second, 20*time.Microsecond, func() error {
			if g := got.Load(); g < n {
				return fmt.Errorf("the client got %d frames, want %d", g, n)
			}
			return nil
		})
	}
	// The subscription is in place once a frame arrives.
	bustest.WaitUntil(b, 10*time.Second, "a camera frame to reach the client", func() bool {
		if got.Load() > 0 {
			return true
		}
		publish()
		return false
	})
	if n := size.Load(); n < 3*w*h {
		b.Fatalf("a frame of %d bytes reached the client, want at least the %d of its pixels", n, 3*w*h)
	}
	b.ResetTimer()
	publishing = 0
	for i := range b.N {
		start := got.Load()
		img.Header.Stamp.Nanosec = uint32(i)
		publish()
		wait(start + 1)
	}
	b.StopTimer()
	b.ReportMetric(float64(publishing.Nanoseconds())/float64(b.N), "publish-ns/op")
}

// BenchmarkCameraNoClients publishes raw 640×480 head camera frames in
// process while only the web UI's stream (a bus.SubscribeValues
// subscriber, as server/camera) takes them and no Foxglove client
// subscribes to the camera channel: one op is one frame, and its time is
// what the publishing executor spends on it. The Foxglove server must not
// copy frames nobody of its clients will see.
//
//	go test -run '^$' -bench CameraNoClients -benchmem ./server/foxglove
func BenchmarkCameraNoClients(b *testing.B) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	bb := mem.New()
	defer bb.Close()
	srv, err := foxglove.New(foxglove.Options{Bus: bb, Exec: ex, TimeInterval: -1,
		OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw, Set: func(context.Context, bool) error { return nil }}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	// The web UI's stream holds the camera and takes every frame.
	webUI, err := bus.SubscribeValues(bb, msg.TopicHeadCameraImageRaw, bus.QoS{Depth: 1}, ex, func(string, any) {})
	if err != nil {
		b.Fatal(err)
	}
	defer webUI.Unsubscribe()
	img := msg.Image{Height: 480, Width: 640, Encoding: "rgb8", Step: 640 * 3, Data: make([]byte, 640*480*3)}
	img.Header.FrameID = "head_camera"
	b.SetBytes(int64(len(img.Data)))
	b.ResetTimer()
	for range b.N {
		if err := bb.Publish(msg.TopicHeadCameraImageRaw, img); err != nil {
			b.Fatal(err)
		}
	}
}
