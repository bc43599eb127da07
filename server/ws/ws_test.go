package ws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/internal/fielderr"
)

type testClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func newGateway(t *testing.T) (*Gateway, *testClient) {
	t.Helper()
	g := New(Options{})
	g.Handle("management", "echo", func(_ context.Context, _ *Client, params json.RawMessage) (any, error) {
		var p struct {
			NodeID string `json:"node_id"`
			Count  int    `json:"count"`
		}
		if err := DecodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.NodeID == "" {
			return nil, ParamError("node_id", "required")
		}
		return p, nil
	})
	g.HandleCommand("head", "home", func(context.Context, *Client, json.RawMessage) (any, error) { return nil, nil })
	// A package's field error, wrapped on its way up, is answered as
	// every field error is: invalid_params naming the field.
	g.Handle("management", "configure", func(context.Context, *Client, json.RawMessage) (any, error) {
		return nil, fmt.Errorf("applying: %w", &fielderr.Error{Field: "rc.channels[2].min", Message: "want 800 to 2200, got 5"})
	})
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, dialTest(t, srv.URL)
}

func dialTest(t *testing.T, url string) *testClient {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &testClient{t, conn}
}

func (c *testClient) roundTrip(raw string) map[string]any {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(raw)); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

func (c *testClient) read() map[string]any {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var m map[string]any
	if err := c.conn.ReadJSON(&m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

func TestRequestsAndErrors(t *testing.T) {
	_, c := newGateway(t)
	for _, tc := range []struct {
		name, req  string
		wantStatus string
		wantID     any
		wantField  string
		wantText   string
	}{
		{"ok, id echoed", `{"id":"abc","type":"management","action":"echo","params":{"node_id":"n1","count":2}}`, "ok", "abc", "", ""},
		{"numeric id", `{"id":7,"type":"management","action":"echo","params":{"node_id":"n1"}}`, "ok", 7.0, "", ""},
		{"malformed", `{"id":"x","type":`, "error", nil, "", "malformed JSON"},
		{"trailing garbage", `{"id":"tg","type":"management","action":"echo","params":{"node_id":"n1"}} {"x":1}`, "error", "tg", "", "after the request"},
		{"trailing whitespace", `{"id":"tw","type":"management","action":"echo","params":{"node_id":"n1"}}` + " \n", "ok", "tw", "", ""},
		{"missing param", `{"id":"m","type":"management","action":"echo","params":{}}`, "error", "m", "node_id", "required"},
		{"no params at all", `{"id":"m2","type":"management","action":"echo"}`, "error", "m2", "node_id", "required"},
		{"wrong type", `{"id":"w","type":"management","action":"echo","params":{"node_id":"n","count":"two"}}`, "error", "w", "count", "int"},
		{"unknown action", `{"id":"u","type":"management","action":"fly"}`, "error", "u", "action", "echo"},
		{"unknown type", `{"id":"t","type":"teleport","action":"go"}`, "error", "t", "type", "teleport"},
		{"unknown target", `{"id":"g","type":"command","target":"wings","action":"flap"}`, "error", "g", "target", "wings"},
		{"command ok", `{"id":"h","type":"command","target":"head","action":"home"}`, "ok", "h", "", ""},
		{"missing type", `{"id":"n"}`, "error", "n", "type", "missing"},
		{"wrapped field error", `{"id":"f","type":"management","action":"configure"}`, "error", "f", "rc.channels[2].min", "applying: rc.channels[2].min: want 800 to 2200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := c.roundTrip(tc.req)
			if m["type"] != "response" || m["status"] != tc.wantStatus {
				t.Fatalf("got %v", m)
			}
			if m["id"] != tc.wantID {
				t.Errorf("id = %v, want %v", m["id"], tc.wantID)
			}
			if tc.wantStatus == "error" {
				e, _ := m["error"].(map[string]any)
				if e == nil {
					t.Fatalf("no error body: %v", m)
				}
				if tc.wantField != "" && e["field"] != tc.wantField {
					t.Errorf("field = %v, want %v (%v)", e["field"], tc.wantField, e["message"])
				}
				if msg, _ := m["message"].(string); !strings.Contains(msg, tc.wantText) {
					t.Errorf("message %q does not mention %q", msg, tc.wantText)
				}
			}
		})
	}
	// Field errors, the gateway's own and a package's wrapped, have one
	// code.
	for _, req := range []string{`{"id":"m","type":"management","action":"echo"}`, `{"id":"f","type":"management","action":"configure"}`} {
		if e, _ := c.roundTrip(req)["error"].(map[string]any); e["code"] != CodeInvalidParam {
			t.Errorf("%s: code %v, want %s", req, e["code"], CodeInvalidParam)
		}
	}
	// The connection survived all of that.
	if m := c.roundTrip(`{"id":"last","type":"management","action":"echo","params":{"node_id":"n"}}`); m["status"] != "ok" {
		t.Errorf("connection unusable after errors: %v", m)
	}
}

func TestSubscribeAndState(t *testing.T) {
	g, c := newGateway(t)
	if m := c.roundTrip(`{"id":"s","type":"subscribe","topics":["head","tracks"],"rate_hz":0}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	if m := c.roundTrip(`{"id":"u","type":"unsubscribe","topics":["tracks"]}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	if m := c.roundTrip(`{"id":"bad","type":"subscribe","topics":[]}`); m["status"] != "error" {
		t.Fatalf("empty topics accepted: %v", m)
	}
	g.Publish("tracks", map[string]any{"left_velocity": 1})
	g.Publish("head", map[string]any{"pan": 44.8})
	m := c.read()
	if m["type"] != "state" || m["node"] != "head" {
		t.Fatalf("got %v, want the head state (tracks was unsubscribed)", m)
	}
	if d := m["data"].(map[string]any); d["pan"] != 44.8 {
		t.Errorf("data = %v", d)
	}
}

func TestRateLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	g := New(Options{Now: func() time.Time { return now }})
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := dialTest(t, srv.URL)
	if m := c.roundTrip(`{"id":"s","type":"subscribe","topics":["head"],"rate_hz":2}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	// 10 updates 100 ms apart at 2 Hz: only those 500 ms apart get through.
	for i := 0; i < 10; i++ {
		g.Publish("head", map[string]any{"i": i})
		now = now.Add(100 * time.Millisecond)
	}
	g.Publish("head", map[string]any{"i": 10})
	var got []float64
	for len(got) < 3 {
		m := c.read()
		got = append(got, m["data"].(map[string]any)["i"].(float64))
	}
	if got[0] != 0 || got[1] != 5 || got[2] != 10 {
		t.Errorf("delivered %v, want [0 5 10]", got)
	}
}

// Two streams of one topic (both arms on "arms"), published alternately
// faster than the client's rate: each stream is limited on its own, so
// both keep arriving.
func TestRateLimitPerStream(t *testing.T) {
	now := time.Unix(1000, 0)
	g := New(Options{Now: func() time.Time { return now }})
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := dialTest(t, srv.URL)
	if m := c.roundTrip(`{"id":"s","type":"subscribe","topics":["arms"],"rate_hz":2}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	// Left then right, 1 ms apart, every 100 ms, for 1 s.
	for i := 0; i <= 10; i++ {
		g.PublishStream("arms", "left", map[string]any{"arm": "left", "i": i})
		now = now.Add(time.Millisecond)
		g.PublishStream("arms", "right", map[string]any{"arm": "right", "i": i})
		now = now.Add(99 * time.Millisecond)
	}
	got := map[string][]float64{}
	for n := 0; n < 6; n++ {
		d := c.read()["data"].(map[string]any)
		arm := d["arm"].(string)
		got[arm] = append(got[arm], d["i"].(float64))
	}
	for _, arm := range []string{"left", "right"} {
		if want := []float64{0, 5, 10}; !slices.Equal(got[arm], want) {
			t.Errorf("%s arm: delivered %v, want %v (got %v)", arm, got[arm], want, got)
		}
	}
}

// Watched follows the clients' subscriptions.
func TestWatched(t *testing.T) {
	g := New(Options{})
	srv := httptest.NewServer(g)
	defer srv.Close()
	if g.Watched("arms") {
		t.Fatal("watched with no client")
	}
	c := dialTest(t, srv.URL)
	if m := c.roundTrip(`{"id":"s","type":"subscribe","topics":["arms"]}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	if !g.Watched("arms") || g.Watched("head") {
		t.Errorf("after subscribing to arms: arms %v, head %v; want true, false", g.Watched("arms"), g.Watched("head"))
	}
	if m := c.roundTrip(`{"id":"u","type":"unsubscribe","topics":["arms"]}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	if g.Watched("arms") {
		t.Error("arms still watched after unsubscribing")
	}
}

func TestSlowClientDoesNotBlockOthers(t *testing.T) {
	// A client whose socket stays full past the write deadline is
	// disconnected; count what it had dropped by then too.
	var gone atomic.Uint64
	g := New(Options{SendQueue: 4, OnDisconnect: func(ci ClientInfo) { gone.Add(ci.Dropped) }})
	srv := httptest.NewServer(g)
	defer srv.Close()
	slow := dialTest(t, srv.URL) // never reads
	fast := dialTest(t, srv.URL)
	for _, c := range []*testClient{slow, fast} {
		if m := c.roundTrip(`{"id":"s","type":"subscribe","topics":["head"]}`); m["status"] != "ok" {
			t.Fatal(m)
		}
	}
	big := strings.Repeat("x", 64<<10)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 500; i++ {
			g.Publish("head", map[string]any{"i": i, "pad": big})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Publish blocked on a client that does not read")
	}
	m := fast.read()
	if m["type"] != "state" {
		t.Errorf("fast client got %v", m["type"])
	}
	dropped := gone.Load()
	for _, ci := range g.Clients() {
		dropped += ci.Dropped
	}
	if dropped == 0 {
		t.Error("no state update was dropped for the client that does not read")
	}
}
