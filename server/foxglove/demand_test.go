package foxglove_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/foxglove"
	"github.com/saint-os/saint/server/ws"
)

// switches records an on-demand topic's Set calls.
type switches struct {
	mu   sync.Mutex
	ons  []bool
	fail error
}

func (s *switches) set(_ context.Context, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.ons = append(s.ons, on)
	return nil
}

func (s *switches) calls() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ons)
}

// TestOnDemand checks the head camera's topic is advertised before its
// first frame, as the ROS 2 Image type, and is switched on by its first
// subscriber and off when the last one leaves, once each.
func TestOnDemand(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	sw := &switches{}
	srv, err := foxglove.New(foxglove.Options{Bus: b, Exec: ex, OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw, Set: sw.set}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()

	var camera foxglove.Channel
	for _, ch := range srv.Channels() {
		if ch.Topic == msg.TopicHeadCameraImageRaw {
			camera = ch
		}
	}
	if camera.Encoding != "cdr" || camera.SchemaName != "sensor_msgs/msg/Image" || camera.SchemaEncoding != "ros2msg" {
		t.Fatalf("camera channel %+v, want cdr sensor_msgs/msg/Image advertised before any frame", camera)
	}
	subscribe := func(c *fgClient, id int) {
		c.until("camera advertise", func(m map[string]any, _ []byte) bool { return c.channels[msg.TopicHeadCameraImageRaw] != 0 })
		c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": id, "channelId": c.channels[msg.TopicHeadCameraImageRaw]}}})
	}
	waitCalls := func(want ...bool) {
		t.Helper()
		bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
			if got := sw.calls(); !slices.Equal(got, want) {
				return errors.New("switched " + fmtBools(got) + ", want " + fmtBools(want))
			}
			return nil
		})
	}
	// The camera sends frames while it is switched on, so no switch-on is
	// repeated.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if c := sw.calls(); len(c) == 0 || !c[len(c)-1] {
				continue
			}
			_ = b.Publish(msg.TopicHeadCameraImageRaw, msg.Image{Height: 1, Width: 1, Encoding: msg.ImageRGB8, Step: 3, Data: []byte{1, 2, 3}})
		}
	}()
	a := dial(t, "ws://"+addr+"/")
	subscribe(a, 1)
	waitCalls(true)
	other := dial(t, "ws://"+addr+"/")
	subscribe(other, 7)
	other.until("camera frame", func(_ map[string]any, bin []byte) bool { return len(bin) > 5 && bin[0] == 1 })
	// The first subscriber leaves; the second repeat of its unsubscribe is
	// answered, so the first has been handled.
	a.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{1}})
	a.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{1}})
	a.until("status", func(m map[string]any, _ []byte) bool { return m["op"] == "status" })
	if got := sw.calls(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("switched %s while a subscriber was left, want on only", fmtBools(got))
	}
	other.conn.Close() // the last subscriber goes away without unsubscribing
	waitCalls(true, false)
	close(stop)

	// A camera that cannot start is reported to the subscriber, who may
	// try again.
	sw.mu.Lock()
	sw.fail = errors.New("the e-stop is active")
	sw.mu.Unlock()
	c := dial(t, "ws://"+addr+"/")
	subscribe(c, 3)
	c.until("status", func(m map[string]any, _ []byte) bool {
		return m["op"] == "status" && m["level"].(float64) == 1 &&
			m["message"] == "subscribe: /saint/head/camera/image_raw carries messages only on demand and could not be started: the e-stop is active"
	})
	waitCalls(true, false)
}

func fmtBools(bs []bool) string {
	s := "["
	for i, b := range bs {
		if i > 0 {
			s += " "
		}
		if b {
			s += "on"
		} else {
			s += "off"
		}
	}
	return s + "]"
}

// TestOnDemandRepeated checks a switch-on that brings nothing (sent before
// the camera's node was there) is repeated while the topic stays silent.
func TestOnDemandRepeated(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	sw := &switches{}
	srv, err := foxglove.New(foxglove.Options{Bus: b, Exec: ex, OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw, Set: sw.set}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	c := dial(t, "ws://"+addr+"/")
	c.until("camera advertise", func(map[string]any, []byte) bool { return c.channels[msg.TopicHeadCameraImageRaw] != 0 })
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": c.channels[msg.TopicHeadCameraImageRaw]}}})
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if got := sw.calls(); len(got) < 2 || !got[0] || !got[1] {
			return errors.New("switched " + fmtBools(got) + ", want on, then on again")
		}
		return nil
	})
}

// TestOnDemandClaimsAsFoxglove: the switches are the Foxglove server's
// claim, made as the caller DemandCaller whose Done closes when the
// server stops, so whoever counts the camera's holders (the router)
// tells it from the web UI and drops it should the server stop without
// switching off. A camera already streaming for someone else is claimed
// all the same: its holder count decides when it goes off, not this
// server.
func TestOnDemandClaimsAsFoxglove(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	var mu sync.Mutex
	var callers []ws.Caller
	var ons []bool
	set := func(ctx context.Context, on bool) error {
		mu.Lock()
		defer mu.Unlock()
		callers = append(callers, ws.CallerOf(ctx, nil))
		ons = append(ons, on)
		return nil
	}
	srv, err := foxglove.New(foxglove.Options{Bus: b, Exec: ex, OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw, Set: set}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // someone else's camera, streaming
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			_ = b.Publish(msg.TopicHeadCameraImageRaw, msg.Image{Height: 1, Width: 1, Encoding: msg.ImageRGB8, Step: 3, Data: []byte{1, 2, 3}})
		}
	}()
	c := dial(t, "ws://"+addr+"/")
	c.until("camera advertise", func(map[string]any, []byte) bool { return c.channels[msg.TopicHeadCameraImageRaw] != 0 })
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": c.channels[msg.TopicHeadCameraImageRaw]}}})
	c.until("camera frame", func(_ map[string]any, bin []byte) bool { return len(bin) > 5 && bin[0] == 1 })
	c.conn.Close()
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(ons, []bool{true, false}) {
			return errors.New("switched " + fmtBools(ons) + ", want on, then off")
		}
		return nil
	})
	mu.Lock()
	got := slices.Clone(callers)
	mu.Unlock()
	for i, cl := range got {
		if cl.Name != foxglove.DemandCaller || cl.Done == nil {
			t.Fatalf("switch %d made as %+v, want %q with a Done", i, cl, foxglove.DemandCaller)
		}
	}
	select {
	case <-got[0].Done:
		t.Fatal("the caller's Done is closed while the server runs")
	default:
	}
	srv.Shutdown()
	select {
	case <-got[0].Done:
	case <-time.After(5 * time.Second):
		t.Fatal("the caller's Done is not closed after Shutdown")
	}
}

// TestOnDemandMaxRate checks an on-demand topic's messages reach clients
// at most Demand.MaxRate a second by the executor's clock: the stamps of
// the frames a client gets are at least 1/MaxRate apart, though the topic
// carries a message every 5 ms.
func TestOnDemandMaxRate(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	const rate = 20
	srv, err := foxglove.New(foxglove.Options{Bus: b, Exec: ex, OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw, MaxRate: rate,
		Set: func(context.Context, bool) error { return nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			_ = b.Publish(msg.TopicHeadCameraImageRaw, msg.Image{Height: 1, Width: 1, Encoding: msg.ImageRGB8, Step: 3, Data: []byte{1, 2, 3}})
		}
	}()
	c := dial(t, "ws://"+addr+"/")
	c.until("camera advertise", func(map[string]any, []byte) bool { return c.channels[msg.TopicHeadCameraImageRaw] != 0 })
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": c.channels[msg.TopicHeadCameraImageRaw]}}})
	var stamps []uint64
	c.until("8 camera frames", func(_ map[string]any, bin []byte) bool {
		if len(bin) > 13 && bin[0] == 1 {
			stamps = append(stamps, binary.LittleEndian.Uint64(bin[5:]))
		}
		return len(stamps) == 8
	})
	for i := 1; i < len(stamps); i++ {
		if d := time.Duration(stamps[i] - stamps[i-1]); d < time.Second/rate {
			t.Errorf("frames %d and %d are %v apart, want at least %v", i-1, i, d, time.Second/rate)
		}
	}
}

// TestCameraFrameCDR: a camera frame reaches a client as the
// sensor_msgs/msg/Image CDR a recording stores, whether it was published
// in process (a value, encoded without JSON) or came as JSON from the
// wire; the publisher reusing its pixel buffer for its next frame does
// not change a frame already published.
func TestCameraFrameCDR(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	srv, err := foxglove.New(foxglove.Options{Bus: b, Exec: ex, OnDemand: []foxglove.Demand{{Topic: msg.TopicHeadCameraImageRaw,
		Set: func(context.Context, bool) error { return nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	c := dial(t, "ws://"+addr+"/")
	c.until("camera advertise", func(map[string]any, []byte) bool { return c.channels[msg.TopicHeadCameraImageRaw] != 0 })
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": c.channels[msg.TopicHeadCameraImageRaw]}}})
	types, err := record.NewROS2Types()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := types.Encoding(msg.TopicHeadCameraImageRaw).Channel(msg.TopicHeadCameraImageRaw, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 64, 48
	pixels := make([]byte, 3*w*h)
	for i, asJSON := range []bool{false, true} {
		for j := range pixels {
			pixels[j] = byte(j*7 + i)
		}
		img := msg.Image{Header: msg.Header{Stamp: msg.Time{Sec: 5, Nanosec: uint32(i)}, FrameID: "head_camera"},
			Width: w, Height: h, Encoding: msg.ImageRGB8, Step: 3 * w, Data: pixels}
		payload, err := json.Marshal(img)
		if err != nil {
			t.Fatal(err)
		}
		want, err := spec.Encode(payload)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		stop := make(chan struct{})
		published := make(chan struct{})
		go func() { // publish (again, until it arrives: the subscription may not be in place yet)
			defer close(published)
			for {
				if asJSON {
					_ = b.Publish(msg.TopicHeadCameraImageRaw, json.RawMessage(payload))
				} else if err := ex.Do(ctx, func() {
					_ = b.Publish(msg.TopicHeadCameraImageRaw, img)
					// The head's next frame goes into the same buffer.
					for j := range pixels {
						pixels[j] = 0
					}
					for j := range pixels {
						pixels[j] = byte(j*7 + i)
					}
				}); err != nil {
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		c.until("camera frame", func(_ map[string]any, bin []byte) bool {
			if len(bin) > 13 && bin[0] == 1 && binary.LittleEndian.Uint32(bin[1:]) == 1 {
				// The frame's stamp (after the 4-byte CDR header and
				// the seconds) tells this frame from the one before.
				if p := bin[13:]; len(p) >= 12 && binary.LittleEndian.Uint32(p[8:]) == uint32(i) {
					got = p
					return true
				}
			}
			return false
		})
		close(stop)
		<-published
		if !bytes.Equal(got, want) {
			t.Errorf("frame %d (JSON %v): %d bytes of CDR, want the %d a recording stores", i, asJSON, len(got), len(want))
		}
	}
}
