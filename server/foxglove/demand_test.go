package foxglove_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/foxglove"
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
	a := dial(t, "ws://"+addr+"/")
	subscribe(a, 1)
	waitCalls(true)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			_ = b.Publish(msg.TopicHeadCameraImageRaw, msg.Image{Height: 1, Width: 1, Encoding: msg.ImageRGB8, Step: 3, Data: []byte{1, 2, 3}})
		}
	}()
	other := dial(t, "ws://"+addr+"/")
	subscribe(other, 7)
	other.until("camera frame", func(_ map[string]any, bin []byte) bool { return len(bin) > 5 && bin[0] == 1 })
	// The first subscriber leaves; the second repeat of its unsubscribe is
	// answered, so the first has been handled.
	a.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{1}})
	a.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{1}})
	a.until("status", func(m map[string]any, _ []byte) bool { return m["op"] == "status" })
	close(stop)
	if got := sw.calls(); !slices.Equal(got, []bool{true}) {
		t.Fatalf("switched %s while a subscriber was left, want on only", fmtBools(got))
	}
	other.conn.Close() // the last subscriber goes away without unsubscribing
	waitCalls(true, false)

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
