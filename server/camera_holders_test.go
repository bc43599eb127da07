package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/foxglove"
)

// cameraHead is the head's side of the camera command: the camera is
// what the last command asked, and the switch-offs are counted.
type cameraHead struct {
	mu   sync.Mutex
	on   bool
	offs int
}

func (h *cameraHead) state() (on bool, offs int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.on, h.offs
}

// holdersRobot starts a server with its Foxglove listener and a head
// that follows the camera command.
func holdersRobot(t *testing.T) (*robot, *cameraHead) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.FoxgloveAddr = "127.0.0.1:0"
	})
	head := &cameraHead{}
	sub, err := bus.SubscribeJSON(broker.Connect(nil), msg.TopicHeadCameraCmd, bus.QoS{Depth: 16}, r.ex, func(_ string, c msg.HeadCameraCommand) {
		head.mu.Lock()
		defer head.mu.Unlock()
		head.on = c.Enable
		if !c.Enable {
			head.offs++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return r, head
}

// holders returns who the router says holds the camera.
func (r *robot) holders() []string {
	var hs []string
	if err := r.ex.Do(context.Background(), func() { hs = r.srv.Router().CameraHolders() }); err != nil {
		r.t.Fatal(err)
	}
	return hs
}

// waitHolders waits until the camera's holders are want.
func (r *robot) waitHolders(want ...string) {
	r.t.Helper()
	bustest.CheckFor(r.t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := r.holders(); !slices.Equal(got, want) {
			return fmt.Errorf("camera holders %q, want %q", got, want)
		}
		return nil
	})
}

// waitCamera waits until the head's camera is on (or off).
func waitCamera(t *testing.T, head *cameraHead, on bool) {
	t.Helper()
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got, _ := head.state(); got != on {
			return fmt.Errorf("head camera on %v, want %v", got, on)
		}
		return nil
	})
}

// cameraCommand sends the head camera command and returns the holders
// the answer lists.
func cameraCommand(t *testing.T, c *apiClient, on bool) []string {
	t.Helper()
	var res struct {
		Holders []string `json:"holders"`
	}
	c.ok("command", "head", "camera", map[string]any{"enable": on}, &res)
	return res.Holders
}

// foxgloveViewer is a Foxglove client subscribed to the head camera.
type foxgloveViewer struct {
	conn *websocket.Conn
	done chan struct{}
}

// watchCamera connects a Foxglove client and subscribes it to the head
// camera's channel, as the layout's Image panel does.
func watchCamera(t *testing.T, r *robot) *foxgloveViewer {
	t.Helper()
	u := "ws://" + r.srv.Addrs()["foxglove"] + "/?token=" + url.QueryEscape(r.srv.Token())
	d := websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}}
	conn, _, err := d.Dial(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var id float64
	for id == 0 {
		typ, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for the camera's channel: %v", err)
		}
		var m struct {
			Op       string
			Channels []struct {
				ID    float64
				Topic string
			}
		}
		if typ != websocket.TextMessage || json.Unmarshal(data, &m) != nil || m.Op != "advertise" {
			continue
		}
		for _, ch := range m.Channels {
			if ch.Topic == msg.TopicHeadCameraImageRaw {
				id = ch.ID
			}
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	sub, _ := json.Marshal(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}})
	if err := conn.WriteMessage(websocket.TextMessage, sub); err != nil {
		t.Fatal(err)
	}
	v := &foxgloveViewer{conn: conn, done: make(chan struct{})}
	go func() { // read (and drop) what comes, so the server never waits on us
		defer close(v.done)
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	return v
}

func (v *foxgloveViewer) unsubscribe(t *testing.T) {
	t.Helper()
	if err := v.conn.WriteMessage(websocket.TextMessage, []byte(`{"op":"unsubscribe","subscriptionIds":[1]}`)); err != nil {
		t.Fatal(err)
	}
}

func (v *foxgloveViewer) close() {
	v.conn.Close()
	<-v.done
}

// The head camera is on while anyone holds it: the web UI (a WebSocket
// client's camera command), a Foxglove client subscribed to the camera,
// whichever came first, and it goes off when the last holder lets go or
// goes away.
func TestCameraHolders(t *testing.T) {
	t.Run("web UI first", func(t *testing.T) {
		r, head := holdersRobot(t)
		web, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
		if err != nil {
			t.Fatal(err)
		}
		hs := cameraCommand(t, web, true)
		if len(hs) != 1 || !strings.HasPrefix(hs[0], "websocket client ") {
			t.Fatalf("holders %q after the web UI's camera on, want one WebSocket client", hs)
		}
		webHolder := hs[0]
		waitCamera(t, head, true)
		fox := watchCamera(t, r)
		r.waitHolders(foxglove.DemandCaller, webHolder)
		fox.unsubscribe(t)
		r.waitHolders(webHolder)
		fox.close()
		if on, offs := head.state(); !on || offs != 0 {
			t.Fatalf("Foxglove left: head camera on %v after %d switch-offs, want on for the web UI", on, offs)
		}
		if hs := cameraCommand(t, web, false); len(hs) != 0 {
			t.Errorf("holders %q after the web UI's camera off, want none", hs)
		}
		waitCamera(t, head, false)
	})
	t.Run("Foxglove first", func(t *testing.T) {
		r, head := holdersRobot(t)
		fox := watchCamera(t, r)
		r.waitHolders(foxglove.DemandCaller)
		waitCamera(t, head, true)
		web, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
		if err != nil {
			t.Fatal(err)
		}
		hs := cameraCommand(t, web, true)
		if len(hs) != 2 || hs[0] != foxglove.DemandCaller || !strings.HasPrefix(hs[1], "websocket client ") {
			t.Fatalf("holders %q, want Foxglove and the web UI", hs)
		}
		fox.close() // the last Foxglove subscriber goes away without unsubscribing
		r.waitHolders(hs[1])
		if on, offs := head.state(); !on || offs != 0 {
			t.Fatalf("Foxglove left: head camera on %v after %d switch-offs, want on for the web UI", on, offs)
		}
		cameraCommand(t, web, false)
		waitCamera(t, head, false)
		r.waitHolders()
	})
	t.Run("client disconnects", func(t *testing.T) {
		r, head := holdersRobot(t)
		a, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
		if err != nil {
			t.Fatal(err)
		}
		holderA := cameraCommand(t, a, true)[0]
		hs := cameraCommand(t, a, true) // a repeated claim is one claim
		if len(hs) != 1 {
			t.Fatalf("holders %q after the same client's second camera on, want one", hs)
		}
		hs = cameraCommand(t, b, true)
		holderB := hs[slices.IndexFunc(hs, func(h string) bool { return h != holderA })]
		waitCamera(t, head, true)
		// A browser tab dies: its claim goes with it, the other stays.
		a.conn.Close()
		r.waitHolders(holderB)
		if on, offs := head.state(); !on || offs != 0 {
			t.Fatalf("one client left: head camera on %v after %d switch-offs, want on for the other", on, offs)
		}
		b.conn.Close()
		r.waitHolders()
		waitCamera(t, head, false)
		// A Foxglove viewer that goes away releases it too.
		fox := watchCamera(t, r)
		waitCamera(t, head, true)
		fox.close()
		waitCamera(t, head, false)
		r.waitHolders()
	})
}

// A head that started its camera by itself (camera_autostart) keeps it on
// when a Foxglove client comes and goes and when a web UI that never held
// it turns it off: the router holds it as "autostart" until that claim is
// dropped explicitly.
func TestCameraAutostartHolder(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.FoxgloveAddr = "127.0.0.1:0"
	})
	headBus := broker.Connect(nil)
	head := &cameraHead{on: true}
	sub, err := bus.SubscribeJSON(headBus, msg.TopicHeadCameraCmd, bus.QoS{Depth: 16}, r.ex, func(_ string, c msg.HeadCameraCommand) {
		head.mu.Lock()
		defer head.mu.Unlock()
		head.on = c.Enable
		if !c.Enable {
			head.offs++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	// The head reports its autostarted camera until it is told otherwise.
	stop := make(chan struct{})
	reporting := make(chan struct{})
	go func() {
		defer close(reporting)
		for {
			on, _ := head.state()
			_ = headBus.Publish(msg.TopicHeadState, msg.HeadState{CameraActive: on})
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-reporting })
	r.waitHolders("autostart")

	fox := watchCamera(t, r)
	r.waitHolders("autostart", foxglove.DemandCaller)
	fox.unsubscribe(t)
	r.waitHolders("autostart")
	fox.close()
	web, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	if hs := cameraCommand(t, web, false); !slices.Equal(hs, []string{"autostart"}) {
		t.Fatalf("holders %q after a web UI's camera off, want autostart's", hs)
	}
	if on, offs := head.state(); !on || offs != 0 {
		t.Fatalf("head camera on %v after %d switch-offs, want on for autostart", on, offs)
	}
	var res struct {
		Holders []string `json:"holders"`
	}
	web.ok("command", "head", "camera", map[string]any{"enable": false, "holder": "autostart"}, &res)
	if len(res.Holders) != 0 {
		t.Fatalf("holders %q after releasing autostart, want none", res.Holders)
	}
	waitCamera(t, head, false)
}
