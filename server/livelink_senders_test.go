package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/inputs/livelink"
)

// faceSender sends Live Link Face packets from 127.0.0.1, as the app
// would, with the head turned by a yaw in degrees.
type faceSender struct {
	t     *testing.T
	conn  *net.UDPConn
	frame int32
}

func newFaceSender(t *testing.T, to string) *faceSender {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &faceSender{t: t, conn: c, frame: 1000}
}

// send sends n packets 5 ms apart.
func (f *faceSender) send(yawDeg float32, n int) {
	f.t.Helper()
	period := time.NewTicker(5 * time.Millisecond) // the phone's frame rate, roughly
	defer period.Stop()
	for i := 0; i < n; i++ {
		if err := f.one(yawDeg); err != nil {
			f.t.Fatal(err)
		}
		<-period.C
	}
}

func (f *faceSender) one(yawDeg float32) error {
	p := livelink.FacePacket{DeviceID: "1EACAA6D-D06B-4A50-9463-283791062EB9", Subject: "FaceCapture",
		RateNumerator: 60, RateDenominator: 1}
	p.Values[52] = yawDeg * math.Pi / 180 // HeadYaw, in the app's radians
	f.frame++
	p.FrameNumber = f.frame
	_, err := f.conn.Write(livelink.AppendFacePacket(nil, &p))
	return err
}

// stream sends packets 5 ms apart until the returned stop is called.
func (f *faceSender) stream(yawDeg float32) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
				_ = f.one(yawDeg)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// noHeadPan fails if a head command with this pan is among those received.
func noHeadPan(t *testing.T, ch chan json.RawMessage, pan float32, when string) {
	t.Helper()
	for {
		select {
		case data := <-ch:
			var c msg.HeadCommand
			if json.Unmarshal(data, &c) == nil && math.Abs(float64(c.Pan-pan)) < 0.5 {
				t.Fatalf("%s: the head was commanded to pan %v: %s", when, c.Pan, data)
			}
		default:
			return
		}
	}
}

// TestLiveLinkAllowList: with authentication on, frames from a sender not
// on the allow-list move nothing and the sender is listed; allowed, its
// head yaw drives the head; revoked, it stops; the list survives a
// restart.
func TestLiveLinkAllowList(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.LiveLink = server.LiveLinkOptions{FaceAddr: "127.0.0.1:0", DataAddr: "127.0.0.1:0"}
	})
	b := broker.Connect(nil)
	head := watch(t, r, b, msg.TopicHeadCmd)
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	c.ok("router", "", "load_preset", map[string]any{"preset_name": "facecap_head"}, nil)
	senders := func() livelink.SenderList {
		var l livelink.SenderList
		c.ok("livelink", "", "list_senders", map[string]any{}, &l)
		return l
	}
	if l := senders(); len(l.Allowed) != 0 || len(l.Unknown) != 0 || l.LoopbackAllowed {
		t.Fatalf("a fresh install's senders: %+v", l)
	}

	// 1. Unknown: dropped, counted and listed with its subject.
	face := newFaceSender(t, r.srv.LiveLinkAddrs().Face)
	face.send(20, 40)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		l := senders()
		if len(l.Unknown) != 1 || l.Unknown[0].Address != "127.0.0.1" || l.Unknown[0].Packets < 30 ||
			fmt.Sprint(l.Unknown[0].Subjects) != "[FaceCapture]" || l.Unknown[0].FirstSeen.IsZero() ||
			l.Unknown[0].LastSeen.Before(l.Unknown[0].FirstSeen) || l.Dropped != l.Unknown[0].Packets {
			return fmt.Errorf("senders %+v", l)
		}
		return nil
	})
	noHeadPan(t, head, 20, "an unknown sender")
	var sources struct {
		Sources []msg.LiveLinkSubject `json:"sources"`
	}
	c.ok("router", "", "list_livelink_sources", map[string]any{}, &sources)
	if len(sources.Sources) != 0 {
		t.Errorf("an unknown sender's subject is listed: %+v", sources.Sources)
	}
	// The data port tells a refused sender why.
	dc, err := net.Dial("tcp", r.srv.LiveLinkAddrs().Data)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(dc, `{"v":1,"subject":"UE_Character","type":"animation","names":["elbow"],"values":[10]}`)
	_ = dc.SetReadDeadline(time.Now().Add(5 * time.Second))
	reply, err := bufio.NewReader(dc).ReadString('\n')
	dc.Close()
	var je livelink.JSONError
	if err != nil || json.Unmarshal([]byte(reply), &je) != nil || je.Field != "sender" || !strings.Contains(je.Message, "127.0.0.1") {
		t.Errorf("data port reply %q (%v), want a sender error", reply, err)
	}
	// The refused frame's subject joins the unknown sender's list on the
	// receiver's own time, not before the reply is written.
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if l := senders(); len(l.Unknown) != 1 || fmt.Sprint(l.Unknown[0].Subjects) != "[FaceCapture UE_Character]" {
			return fmt.Errorf("senders %+v, want the data port's subject listed", l)
		}
		return nil
	})

	// Bad addresses are refused by field.
	c.fails("livelink", "", "allow_sender", map[string]any{"address": "robot.local"}, "invalid_params", "address")
	c.fails("livelink", "", "revoke_sender", map[string]any{"address": "10.0.0.9"}, "invalid_params", "address")

	// 2. Allowed: its head yaw moves the head.
	var l livelink.SenderList
	c.ok("livelink", "", "allow_sender", map[string]any{"address": "127.0.0.1"}, &l)
	if len(l.Allowed) != 1 || l.Allowed[0].Address != "127.0.0.1" || len(l.Unknown) != 0 ||
		fmt.Sprint(l.Allowed[0].Subjects) != "[FaceCapture UE_Character]" {
		t.Fatalf("after allow_sender: %+v", l)
	}
	stop := face.stream(20)
	expect(t, head, "pan 20 from the allowed sender", func(c msg.HeadCommand) bool { return math.Abs(float64(c.Pan-20)) < 0.05 })
	stop()

	// 3. Revoked: it stops moving the head.
	c.ok("livelink", "", "revoke_sender", map[string]any{"address": "127.0.0.1"}, &l)
	if len(l.Allowed) != 0 {
		t.Fatalf("after revoke_sender: %+v", l)
	}
	before := senders().Dropped
	face.send(-15, 40)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if d := senders().Dropped; d < before+30 {
			return fmt.Errorf("dropped %d, want at least %d", d, before+30)
		}
		return nil
	})
	noHeadPan(t, head, -15, "a revoked sender")

	// 4. The allow-list survives a restart.
	c.ok("livelink", "", "allow_sender", map[string]any{"address": "::ffff:127.0.0.1"}, nil)
	r.srv.Shutdown()
	r.startServer(broker.Connect(nil))
	c, _, err = dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	l = senders()
	if len(l.Allowed) != 1 || l.Allowed[0].Address != "127.0.0.1" || fmt.Sprint(l.Allowed[0].Subjects) != "[FaceCapture]" {
		t.Fatalf("allow-list after a restart: %+v", l)
	}
	c.ok("router", "", "load_preset", map[string]any{"preset_name": "facecap_head"}, nil)
	face = newFaceSender(t, r.srv.LiveLinkAddrs().Face)
	stop = face.stream(10)
	defer stop()
	expect(t, head, "pan 10 after the restart", func(c msg.HeadCommand) bool { return math.Abs(float64(c.Pan-10)) < 0.05 })
}
