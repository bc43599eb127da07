package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

type fixedAuth struct {
	mu       sync.Mutex
	token    string
	required bool
}

func (a *fixedAuth) Required() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.required }
func (a *fixedAuth) Valid(t string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return t != "" && t == a.token
}

func securedGateway(t *testing.T, o Options) (*Gateway, string) {
	t.Helper()
	g := New(o)
	g.Handle("management", "echo", func(_ context.Context, _ *Client, params json.RawMessage) (any, error) {
		return params, nil
	})
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, "ws" + strings.TrimPrefix(srv.URL, "http")
}

func dialHeader(t *testing.T, url string, h http.Header) (*testClient, *http.Response, error) {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { conn.Close() })
	return &testClient{t, conn}, resp, nil
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func TestAuthMessageGatesEverything(t *testing.T) {
	a := &fixedAuth{token: "s3cret-token-0123456789", required: true}
	g, url := securedGateway(t, Options{Auth: a})
	g.SetTopics("head")
	c, _, err := dialHeader(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{
		`{"id":1,"type":"management","action":"echo","params":{"x":1}}`,
		`{"id":2,"type":"subscribe","topics":["head"],"rate_hz":10}`,
		`{"id":3,"type":"command","target":"head","action":"move","params":{"pan":45}}`,
	} {
		if m := c.roundTrip(req); m["status"] != "error" || errCode(m) != CodeUnauthorized {
			t.Errorf("unauthenticated %s answered %v, want unauthorized", req, m)
		}
	}
	// No state reaches an unauthenticated client.
	g.Publish("head", map[string]float64{"pan": 1})
	if m := c.roundTrip(`{"id":4,"type":"auth","token":"wrong","client_id":"x"}`); errCode(m) != CodeUnauthorized || m["id"] != 4.0 {
		t.Errorf("wrong token answered %v", m)
	}
	if m := c.roundTrip(`{"id":5,"type":"auth"}`); m["error"].(map[string]any)["field"] != "token" {
		t.Errorf("missing token answered %v", m)
	}
	if m := c.roundTrip(`{"type":"auth","token":"s3cret-token-0123456789","client_id":"controller_001"}`); m["status"] != "ok" {
		t.Fatalf("right token answered %v", m)
	}
	if m := c.roundTrip(`{"id":6,"type":"management","action":"echo","params":{"x":1}}`); m["status"] != "ok" {
		t.Errorf("after auth: %v", m)
	}
	if cl := g.Clients(); len(cl) != 1 || cl[0].ClientID != "controller_001" || !cl[0].Authenticated {
		t.Errorf("clients %+v", cl)
	}
}

func TestBearerHeader(t *testing.T) {
	a := &fixedAuth{token: "s3cret-token-0123456789", required: true}
	_, url := securedGateway(t, Options{Auth: a})
	_, resp, err := dialHeader(t, url, http.Header{"Authorization": {"Bearer nope"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong bearer: err %v resp %v, want 401", err, resp)
	}
	c, _, err := dialHeader(t, url, http.Header{"Authorization": {"Bearer s3cret-token-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.roundTrip(`{"id":1,"type":"management","action":"echo","params":{}}`); m["status"] != "ok" {
		t.Errorf("bearer client: %v", m)
	}
}

func TestAuthOff(t *testing.T) {
	a := &fixedAuth{token: "s3cret-token-0123456789", required: false}
	_, url := securedGateway(t, Options{Auth: a})
	c, _, err := dialHeader(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := c.roundTrip(`{"id":1,"type":"management","action":"echo","params":{}}`); m["status"] != "ok" {
		t.Errorf("auth off: %v", m)
	}
}

func TestCloseSessions(t *testing.T) {
	a := &fixedAuth{token: "s3cret-token-0123456789", required: true}
	g, url := securedGateway(t, Options{Auth: a})
	hdr := http.Header{"Authorization": {"Bearer s3cret-token-0123456789"}}
	g.Handle("management", "regenerate", func(_ context.Context, c *Client, _ json.RawMessage) (any, error) {
		g.CloseSessions(c, "token regenerated")
		c.CloseAfterReply("token regenerated")
		return map[string]string{"token": "new"}, nil
	})
	other, _, _ := dialHeader(t, url, hdr)
	me, _, _ := dialHeader(t, url, hdr)
	if m := me.roundTrip(`{"id":1,"type":"management","action":"regenerate"}`); m["status"] != "ok" {
		t.Fatalf("regenerate: %v", m)
	}
	for name, c := range map[string]*testClient{"other": other, "requester": me} {
		_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.conn.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || ce.Text != "token regenerated" {
			t.Errorf("%s: read %v, want close 1008 token regenerated", name, err)
		}
	}
}

func TestOriginCheck(t *testing.T) {
	_, url := securedGateway(t, Options{AllowedOrigins: []string{"http://saint.local"}})
	host := strings.TrimPrefix(url, "ws://")
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + host, true},
		{"http://saint.local", true},
		{"http://evil.example", false},
		{"null", false},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		_, resp, err := dialHeader(t, url, h)
		if (err == nil) != tc.ok {
			t.Errorf("Origin %q: err %v, want allowed=%v", tc.origin, err, tc.ok)
		}
		if !tc.ok && (resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("Origin %q: response %v, want 403", tc.origin, resp)
		}
	}
}

func TestOversizedFrameClosesWithReason(t *testing.T) {
	_, url := securedGateway(t, Options{MaxMessage: 1024})
	big, _, _ := dialHeader(t, url, nil)
	other, _, _ := dialHeader(t, url, nil)
	payload := fmt.Sprintf(`{"id":1,"type":"management","action":"echo","params":{"pad":%q}}`, strings.Repeat("x", 2000))
	if err := big.conn.WriteMessage(websocket.TextMessage, []byte(payload)); err != nil {
		t.Fatal(err)
	}
	_ = big.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := big.conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig || !strings.Contains(ce.Text, "1024 bytes") {
		t.Fatalf("oversized frame: %v, want close 1009 naming the limit", err)
	}
	if m := other.roundTrip(`{"id":2,"type":"management","action":"echo","params":{}}`); m["status"] != "ok" {
		t.Errorf("other client after the oversized frame: %v", m)
	}
	// Exactly at the limit is fine.
	ok, _, _ := dialHeader(t, url, nil)
	pad := 1024 - len(`{"id":3,"type":"management","action":"echo","params":{"pad":""}}`)
	if m := ok.roundTrip(fmt.Sprintf(`{"id":3,"type":"management","action":"echo","params":{"pad":%q}}`, strings.Repeat("y", pad))); m["status"] != "ok" {
		t.Errorf("a message of exactly the limit: %v", m)
	}
}

func TestRequestRateLimit(t *testing.T) {
	// 1 request/s with a burst of 5: a quick run of 20 gets 5 through.
	_, url := securedGateway(t, Options{RatePerSecond: 1, RateBurst: 5, AbuseLimit: 30})
	c, _, _ := dialHeader(t, url, nil)
	other, _, _ := dialHeader(t, url, nil)
	for i := 0; i < 20; i++ {
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf(`{"id":%d,"type":"management","action":"echo"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	ok, limited := 0, 0
	for i := 0; i < 20; i++ {
		m := c.read()
		switch {
		case m["status"] == "ok":
			ok++
		case errCode(m) == CodeRateLimited:
			limited++
		default:
			t.Fatalf("unexpected %v", m)
		}
	}
	if ok < 5 || ok > 7 || ok+limited != 20 {
		t.Errorf("%d ok, %d rate limited; want about 5 through", ok, limited)
	}
	if m := other.roundTrip(`{"id":1,"type":"management","action":"echo"}`); m["status"] != "ok" {
		t.Errorf("another client is limited too: %v", m)
	}
	// Persistent abuse closes the connection.
	for i := 0; i < 40; i++ {
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"management","action":"echo"}`)); err != nil {
			break
		}
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || ce.Text != "rate limit exceeded" {
			t.Errorf("abuse ended with %v, want close 1008 rate limit exceeded", err)
		}
		break
	}
}

func TestUnknownTopic(t *testing.T) {
	g, url := securedGateway(t, Options{})
	g.SetTopics("head", "tracks")
	c, _, _ := dialHeader(t, url, nil)
	m := c.roundTrip(`{"id":1,"type":"subscribe","topics":["head","legs"],"rate_hz":10}`)
	if e, _ := m["error"].(map[string]any); e == nil || e["field"] != "topics" || !strings.Contains(e["message"].(string), `"legs"`) {
		t.Errorf("unknown topic: %v", m)
	}
}

func TestAuthTimeout(t *testing.T) {
	a := &fixedAuth{token: "s3cret-token-0123456789", required: true}
	_, url := securedGateway(t, Options{Auth: a, AuthTimeout: 50 * time.Millisecond})
	idle, _, _ := dialHeader(t, url, nil)
	authed, _, _ := dialHeader(t, url, http.Header{"Authorization": {"Bearer s3cret-token-0123456789"}})
	_ = idle.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := idle.conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || ce.Text != "authentication timeout" {
		t.Errorf("idle unauthenticated client: %v, want close 1008 authentication timeout", err)
	}
	// The authenticated client outlives the timeout.
	if m := authed.roundTrip(`{"id":1,"type":"management","action":"echo","params":{}}`); m["status"] != "ok" {
		t.Errorf("authenticated client: %v", m)
	}
}

func TestEventTopicsIgnoreRate(t *testing.T) {
	now := time.Unix(1000, 0)
	g, url := securedGateway(t, Options{Now: func() time.Time { return now }})
	g.SetTopics("head")
	g.SetEventTopics("logs")
	c, _, _ := dialHeader(t, url, nil)
	if m := c.roundTrip(`{"id":"s","type":"subscribe","topics":["head","logs"],"rate_hz":1}`); m["status"] != "ok" {
		t.Fatal(m)
	}
	// Three log events and three head samples within one second: every
	// event arrives, one sample.
	for i := 0; i < 3; i++ {
		g.Publish("logs", map[string]int{"seq": i})
		g.Publish("head", map[string]int{"pan": i})
	}
	g.Publish("logs", map[string]int{"seq": 99}) // marks the end
	var logs, heads int
	for {
		m := c.read()
		if m["node"] == "head" {
			heads++
			continue
		}
		logs++
		if m["data"].(map[string]any)["seq"] == 99.0 {
			break
		}
	}
	if logs != 4 || heads != 1 {
		t.Errorf("%d log events and %d head samples at 1 Hz; want 4 and 1", logs, heads)
	}
}

func TestCommandRightBehindAuth(t *testing.T) {
	a := &fixedAuth{token: "s3cret-token-0123456789", required: true}
	_, url := securedGateway(t, Options{Auth: a})
	c, _, _ := dialHeader(t, url, nil)
	// No waiting for the auth answer: the next request must still be
	// authenticated.
	for _, m := range []string{
		`{"id":1,"type":"auth","token":"s3cret-token-0123456789"}`,
		`{"id":2,"type":"management","action":"echo","params":{}}`,
	} {
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if m := c.read(); m["status"] != "ok" {
			t.Errorf("pipelined after auth: %v", m)
		}
	}
}

func TestCommandsRunInArrivalOrder(t *testing.T) {
	g, url := securedGateway(t, Options{})
	var mu sync.Mutex
	var seen []int
	g.HandleCommand("head", "move", func(_ context.Context, _ *Client, params json.RawMessage) (any, error) {
		var p struct{ Pan int }
		_ = json.Unmarshal(params, &p)
		mu.Lock()
		seen = append(seen, p.Pan)
		mu.Unlock()
		return nil, nil
	})
	c, _, _ := dialHeader(t, url, nil)
	const n = 200
	for i := 0; i < n; i++ {
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf(`{"id":%d,"type":"command","target":"head","action":"move","params":{"pan":%d}}`, i, i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if m := c.read(); m["status"] != "ok" || m["id"] != float64(i) {
			t.Fatalf("response %d: %v", i, m)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, p := range seen {
		if p != i {
			t.Fatalf("handled in order %v, want 0..%d", seen, n-1)
		}
	}
}
