package foxglove_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/server/foxglove"
	"github.com/saint-os/saint/server/ws"
)

// tokenAuth is an API token store whose token a test can change, as
// regenerate_token does.
type tokenAuth struct{ token *atomic.Value }

func newTokenAuth(tok string) tokenAuth {
	a := tokenAuth{token: &atomic.Value{}}
	a.token.Store(tok)
	return a
}

func (a tokenAuth) Required() bool        { return a.token.Load().(string) != "" }
func (a tokenAuth) Valid(tok string) bool { return tok == a.token.Load().(string) }

// fixture is a Foxglove server on a wall-clock executor and an in-process
// bus, with a gateway whose head move command records what it was given.
type fixture struct {
	addr  string
	auth  tokenAuth
	bus   *mem.Bus
	srv   *foxglove.Server
	mu    sync.Mutex
	moves []map[string]float64
}

func newFixture(t testing.TB, token string) *fixture {
	t.Helper()
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = ex.Run(ctx) }()
	f := &fixture{bus: mem.New(), auth: newTokenAuth(token)}
	g := ws.New(ws.Options{})
	g.HandleCommand("head", "move", func(_ context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
		var p struct {
			Pan *float64 `json:"pan"`
		}
		if err := ws.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Pan == nil || *p.Pan < -180 || *p.Pan > 180 {
			return nil, ws.ParamError("pan", "want -180 to 180, got %s", params)
		}
		f.mu.Lock()
		f.moves = append(f.moves, map[string]float64{"pan": *p.Pan})
		f.mu.Unlock()
		return map[string]any{"ok": true}, nil
	})
	g.Handle("management", "list_adopted", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		return map[string]any{"nodes": []string{"sim-head"}}, nil
	})
	// A handler that needs its WebSocket client, as system shutdown does.
	g.HandleCommand("system", "shutdown", func(_ context.Context, c *ws.Client, _ json.RawMessage) (any, error) {
		return c.Info(), nil
	})
	g.Handle("management", "list_unadopted", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		panic("a bug in a handler")
	})
	srv, err := foxglove.New(foxglove.Options{Bus: f.bus, Exec: ex, Gateway: g, Auth: f.auth, TimeInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.addr, err = srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	t.Cleanup(func() {
		srv.Shutdown()
		cancel()
		f.bus.Close()
	})
	return f
}

func (f *fixture) moveCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.moves)
}

type fgClient struct {
	t    *testing.T
	conn *websocket.Conn
	// channels by topic, from advertise
	channels map[string]uint32
}

func dial(t *testing.T, url string) *fgClient {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}}
	conn, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	if conn.Subprotocol() != foxglove.Subprotocol {
		t.Fatalf("subprotocol %q", conn.Subprotocol())
	}
	t.Cleanup(func() { conn.Close() })
	return &fgClient{t: t, conn: conn, channels: map[string]uint32{}}
}

// next reads the next message; JSON ones are decoded into a map, binary
// ones returned raw.
func (c *fgClient) next() (map[string]any, []byte) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	typ, b, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	if typ == websocket.BinaryMessage {
		return nil, b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatal(err)
	}
	if m["op"] == "advertise" {
		for _, ch := range m["channels"].([]any) {
			ch := ch.(map[string]any)
			c.channels[ch["topic"].(string)] = uint32(ch["id"].(float64))
		}
	}
	return m, nil
}

// until reads until pred accepts a message.
func (c *fgClient) until(what string, pred func(map[string]any, []byte) bool) {
	c.t.Helper()
	for range 500 {
		if pred(c.next()) {
			return
		}
	}
	c.t.Fatalf("no %s", what)
}

func (c *fgClient) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

func (c *fgClient) sendBinary(b []byte) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.BinaryMessage, b); err != nil {
		c.t.Fatal(err)
	}
}

// expectStatus reads until a status message containing want arrives.
func (c *fgClient) expectStatus(want string) {
	c.t.Helper()
	c.until("status containing "+want, func(m map[string]any, _ []byte) bool {
		if m["op"] == "status" {
			msg, _ := m["message"].(string)
			if m["level"].(float64) != 2 {
				c.t.Errorf("status %q has level %v, want 2 (error)", msg, m["level"])
			}
			if strings.Contains(msg, want) {
				return true
			}
			c.t.Errorf("unexpected status %q while waiting for %q", msg, want)
		}
		return false
	})
}

func publishFrame(channel uint32, payload string) []byte {
	b := make([]byte, 5+len(payload))
	b[0] = 1
	binary.LittleEndian.PutUint32(b[1:], channel)
	copy(b[5:], payload)
	return b
}

func TestSubscribeAndTime(t *testing.T) {
	f := newFixture(t, "")
	c := dial(t, "ws://"+f.addr+"/")
	info, _ := c.next()
	if info["op"] != "serverInfo" {
		t.Fatalf("first message %v, want serverInfo", info)
	}
	caps := fmt.Sprint(info["capabilities"])
	for _, want := range []string{"clientPublish", "time", "services"} {
		if !strings.Contains(caps, want) {
			t.Errorf("capabilities %s lack %s", caps, want)
		}
	}

	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			_ = f.bus.Publish("/saint/head/state", map[string]any{"pan": i, "tilt": 0.5})
		}
	}()
	var schema string
	c.until("advertise of /saint/head/state", func(m map[string]any, _ []byte) bool {
		if m["op"] != "advertise" {
			return false
		}
		for _, ch := range m["channels"].([]any) {
			ch := ch.(map[string]any)
			if ch["topic"] == "/saint/head/state" {
				// The head state has a ROS 2 type: advertised as rosbag2
				// stores it.
				if ch["encoding"] != "cdr" || ch["schemaEncoding"] != "ros2msg" || ch["schemaName"] != "saint_os/msg/HeadState" {
					t.Errorf("channel %v", ch)
				}
				schema, _ = ch["schema"].(string)
				return true
			}
		}
		return false
	})
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	headState, _ := reg.Message("saint_os/HeadState")
	if schema != string(reg.Schema(headState)) || !strings.HasPrefix(schema, "float32 pan") {
		t.Errorf("schema %s", schema)
	}
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 7, "channelId": c.channels["/saint/head/state"]}}})
	var gotTime bool
	var lastPan float64 = -1
	c.until("three messages and a time", func(_ map[string]any, b []byte) bool {
		switch {
		case len(b) == 9 && b[0] == 2:
			gotTime = true
		case len(b) > 13 && b[0] == 1:
			if id := binary.LittleEndian.Uint32(b[1:]); id != 7 {
				t.Fatalf("message data for subscription %d, want 7", id)
			}
			m, _, err := reg.Decode(headState, b[13:])
			if err != nil {
				t.Fatal(err)
			}
			pan := float64(m["pan"].(float32))
			if pan <= lastPan || m["tilt"] != float32(0.5) {
				t.Errorf("pan %v after %v, tilt %v", pan, lastPan, m["tilt"])
			}
			lastPan = pan
		}
		return gotTime && lastPan >= 0 && lastPan > 3
	})
	c.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{7}})
	// The client's messages are handled in order: the repeat's warning
	// says the unsubscribe before it was handled.
	c.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{7}})
	c.until("the repeated unsubscribe's warning", func(m map[string]any, _ []byte) bool {
		return m != nil && m["op"] == "status" && strings.Contains(fmt.Sprint(m["message"]), "no subscription 7")
	})
	// Frames leave in order: once a time frame stamped after the
	// unsubscribe was handled arrives, no message data may follow.
	handled := uint64(time.Now().UnixNano())
	after := false
	c.until("time frames after the unsubscribe", func(_ map[string]any, b []byte) bool {
		switch {
		case len(b) == 9 && b[0] == 2:
			ts := binary.LittleEndian.Uint64(b[1:])
			if ts > handled {
				after = true
			}
			return ts > handled+uint64(200*time.Millisecond)
		case len(b) > 0 && b[0] == 1 && after:
			t.Fatal("message data after unsubscribe")
		}
		return false
	})
}

func TestAuthAndSubprotocol(t *testing.T) {
	f := newFixture(t, "s3cret")
	d := websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}}
	if _, resp, err := d.Dial("ws://"+f.addr+"/", nil); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %v %v", err, resp)
	}
	if _, resp, err := d.Dial("ws://"+f.addr+"/?token=wrong", nil); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %v %v", err, resp)
	}
	if _, resp, err := websocket.DefaultDialer.Dial("ws://"+f.addr+"/?token=s3cret", nil); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("without the subprotocol: %v %v", err, resp)
	}
	c := dial(t, "ws://"+f.addr+"/?token=s3cret")
	if m, _ := c.next(); m["op"] != "serverInfo" {
		t.Errorf("with the token: %v", m)
	}
	conn, _, err := d.Dial("ws://"+f.addr+"/", http.Header{"Authorization": {"Bearer s3cret"}})
	if err != nil {
		t.Fatalf("bearer header: %v", err)
	}
	conn.Close()
	if _, resp, err := d.Dial("ws://"+f.addr+"/?token=s3cret", http.Header{"Origin": {"https://evil.example"}}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %v %v", err, resp)
	}
	if _, err := foxglove.New(foxglove.Options{}); err == nil {
		t.Error("New without a bus")
	}
}

// TestBadInput sends every kind of bad input: each gets an error status
// naming what was wrong, nothing reaches the command, and the connection
// still works afterwards.
func TestBadInput(t *testing.T) {
	f := newFixture(t, "")
	c := dial(t, "ws://"+f.addr+"/")
	c.next() // serverInfo
	c.next() // advertiseServices

	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": 999}}})
	c.expectStatus("unknown channel id 999")
	c.conn.WriteMessage(websocket.TextMessage, []byte(`{"op": "subscribe", "subscriptions": [`))
	c.expectStatus("malformed JSON")
	c.send(map[string]any{"op": "subscribeConnectionGraph"})
	c.expectStatus(`unsupported op "subscribeConnectionGraph"`)
	c.sendBinary(publishFrame(5, `{"pan": 10}`))
	c.expectStatus("channel 5 was not advertised")
	c.sendBinary([]byte{1, 5})
	c.expectStatus("2 bytes, want at least 5")
	c.sendBinary([]byte{9, 1, 2, 3})
	c.expectStatus("unknown opcode 0x09")
	// A topic that is not a command may be advertised (Foxglove's 3D panel
	// advertises its own), but what is published there is refused.
	c.send(map[string]any{"op": "advertise", "channels": []any{map[string]any{"id": 3, "topic": "/saint/head/cmd", "encoding": "json", "schemaName": "x"}}})
	c.sendBinary(publishFrame(3, `{"pan": 10}`))
	c.expectStatus(`client message data: channel 3: topic "/saint/head/cmd" is not a command`)
	c.send(map[string]any{"op": "advertise", "channels": []any{map[string]any{"id": 6, "topic": "/saint/command/system/shutdown", "encoding": "json", "schemaName": "x"}}})
	c.sendBinary(publishFrame(6, `{}`))
	c.expectStatus(`topic "/saint/command/system/shutdown" is not a command`)
	c.send(map[string]any{"op": "advertise", "channels": []any{map[string]any{"id": 4, "topic": "/saint/command/head/move", "encoding": "cdr", "schemaName": "x"}}})
	c.expectStatus(`encoding "cdr" is not supported`)
	c.send(map[string]any{"op": "advertise", "channels": []any{map[string]any{"id": 5, "topic": "/saint/command/head/move", "encoding": "json", "schemaName": "saint.head.move"}}})
	c.sendBinary(publishFrame(5, `{"pan": "left"}`))
	c.expectStatus("/saint/command/head/move: pan: want")
	c.sendBinary(publishFrame(5, `{"pan": 500}`))
	c.expectStatus(`pan: want -180 to 180, got {"pan": 500}`)
	c.sendBinary(publishFrame(5, `[1, 2`))
	c.expectStatus("not a JSON object")
	c.sendBinary([]byte{2, 1, 0, 0, 0, 9, 0, 0, 0, 200, 0, 0, 0, 'j'})
	c.expectStatus("encoding length 200 runs past the end")
	if n := f.moveCount(); n != 0 {
		t.Fatalf("%d moves reached the command after bad input", n)
	}

	// The same connection still publishes.
	c.sendBinary(publishFrame(5, `{"pan": 30}`))
	bustest.WaitUntil(t, 5*time.Second, "the publish to reach the command", func() bool { return f.moveCount() > 0 })
	if f.moveCount() != 1 || f.moves[0]["pan"] != 30 {
		t.Fatalf("moves %v, want one to pan 30", f.moves)
	}
	c.send(map[string]any{"op": "unadvertise", "channelIds": []int{5}})
	c.sendBinary(publishFrame(5, `{"pan": 20}`))
	c.expectStatus("channel 5 was not advertised")
}

func TestServices(t *testing.T) {
	f := newFixture(t, "")
	c := dial(t, "ws://"+f.addr+"/")
	c.next()
	m, _ := c.next()
	if m["op"] != "advertiseServices" {
		t.Fatalf("second message %v, want advertiseServices", m)
	}
	var id uint32
	for _, s := range m["services"].([]any) {
		s := s.(map[string]any)
		if s["name"] == "/saint/management/list_adopted" {
			id = uint32(s["id"].(float64))
		}
		// Foxglove parses both schemas of every service it is offered.
		for _, k := range []string{"requestSchema", "responseSchema"} {
			var schema map[string]any
			if str, _ := s[k].(string); json.Unmarshal([]byte(str), &schema) != nil || schema["type"] != "object" || schema["properties"] == nil {
				t.Errorf("service %s: %s %q, want a JSON Schema of an object", s["name"], k, s[k])
			}
		}
	}
	if id == 0 {
		t.Fatalf("services %v lack /saint/management/list_adopted", m["services"])
	}
	call := func(service, callID uint32, enc, payload string) []byte {
		b := make([]byte, 13+len(enc)+len(payload))
		b[0] = 2
		binary.LittleEndian.PutUint32(b[1:], service)
		binary.LittleEndian.PutUint32(b[5:], callID)
		binary.LittleEndian.PutUint32(b[9:], uint32(len(enc)))
		copy(b[13:], enc)
		copy(b[13+len(enc):], payload)
		return b
	}
	c.sendBinary(call(id, 42, "json", "{}"))
	c.until("service call response", func(_ map[string]any, b []byte) bool {
		if len(b) < 13 || b[0] != 3 {
			return false
		}
		if binary.LittleEndian.Uint32(b[1:]) != id || binary.LittleEndian.Uint32(b[5:]) != 42 {
			t.Fatalf("response header % x", b[:13])
		}
		n := binary.LittleEndian.Uint32(b[9:])
		if string(b[13:13+n]) != "json" || !strings.Contains(string(b[13+n:]), "sim-head") {
			t.Fatalf("response %q", b[13:])
		}
		return true
	})
	var panicky uint32
	for _, s := range m["services"].([]any) {
		if s := s.(map[string]any); s["name"] == "/saint/management/list_unadopted" {
			panicky = uint32(s["id"].(float64))
		}
	}
	c.sendBinary(call(panicky, 44, "json", "{}"))
	c.until("a failure for the panicking handler", func(m map[string]any, _ []byte) bool {
		return m["op"] == "serviceCallFailure" && m["callId"] == 44.0 && strings.Contains(m["message"].(string), "internal error")
	})
	c.sendBinary(call(77, 43, "json", "{}"))
	c.until("service call failure", func(m map[string]any, _ []byte) bool {
		return m["op"] == "serviceCallFailure" && m["callId"] == 43.0 && strings.Contains(m["message"].(string), "unknown service id 77")
	})
}

// TestTokenRegenerated: when the API token changes, a client of the old
// one can no longer move anything and is disconnected.
func TestTokenRegenerated(t *testing.T) {
	f := newFixture(t, "old")
	c := dial(t, "ws://"+f.addr+"/?token=old")
	c.next() // serverInfo
	c.send(map[string]any{"op": "advertise", "channels": []any{map[string]any{"id": 1, "topic": "/saint/command/head/move", "encoding": "json", "schemaName": "x"}}})
	f.auth.token.Store("new")
	c.sendBinary(publishFrame(1, `{"pan": 10}`))
	c.until("the refusal", func(m map[string]any, _ []byte) bool {
		msg, _ := m["message"].(string)
		return m["op"] == "status" && strings.Contains(msg, "token changed")
	})
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.conn.ReadMessage()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("a client of the old token stayed connected")
		}
		if err != nil {
			break // disconnected
		}
	}
	if n := f.moveCount(); n != 0 {
		t.Errorf("%d moves with an old token", n)
	}
	dial(t, "ws://"+f.addr+"/?token=new").next()
}
