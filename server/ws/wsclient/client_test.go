package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fakeServer upgrades one connection, checks its bearer token, hands every
// message the client sends to got and sends what arrives on send.
func fakeServer(t *testing.T, token string) (url string, got <-chan map[string]any, send chan<- any) {
	t.Helper()
	gotc, sendc := make(chan map[string]any, 16), make(chan any, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		go func() {
			for v := range sendc {
				if conn.WriteJSON(v) != nil {
					return
				}
			}
		}()
		for {
			var m map[string]any
			if conn.ReadJSON(&m) != nil {
				return
			}
			gotc <- m
		}
	}))
	t.Cleanup(func() { close(sendc); srv.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/saint", gotc, sendc
}

func recv[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing arrived in 5 s")
	}
	var zero T
	return zero
}

func TestSubscribeCommandAndUpdates(t *testing.T) {
	url, got, send := fakeServer(t, "secret")
	c, err := Dial(context.Background(), url, "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe([]string{"sim", "tracks"}, 20); err != nil {
		t.Fatal(err)
	}
	m := recv(t, got)
	if m["type"] != "subscribe" || m["rate_hz"] != 20.0 || len(m["topics"].([]any)) != 2 {
		t.Errorf("subscribe sent %v", m)
	}
	if err := c.Command("tracks", "drive", map[string]any{"linear": 0.3, "angular": 0}); err != nil {
		t.Fatal(err)
	}
	m = recv(t, got)
	params, _ := m["params"].(map[string]any)
	if m["type"] != "command" || m["target"] != "tracks" || m["action"] != "drive" || params["linear"] != 0.3 {
		t.Errorf("command sent %v", m)
	}
	send <- map[string]any{"type": "state", "node": "tracks", "timestamp": 12.5, "data": map[string]any{"left_velocity": 0.25}}
	u := recv(t, c.Updates())
	if u.Topic != "tracks" || u.Timestamp != 12.5 || !strings.Contains(string(u.Data), `"left_velocity":0.25`) {
		t.Errorf("update = %+v %s", u, u.Data)
	}
	send <- map[string]any{"id": "client-2", "type": "response", "status": "error", "message": "tracks: e-stop active"}
	send <- map[string]any{"type": "state", "node": "head", "timestamp": 13, "data": json.RawMessage(`{}`)}
	recv(t, c.Updates()) // the error answer was read before this update
	if got := c.LastError(); got != "tracks: e-stop active" {
		t.Errorf("LastError = %q", got)
	}
}

func TestDialWrongTokenNamesTheStatus(t *testing.T) {
	url, _, _ := fakeServer(t, "secret")
	_, err := Dial(context.Background(), url, "wrong")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Dial with a wrong token: %v, want an error naming HTTP 401", err)
	}
}

// Call waits for the answer to its own request, whatever arrives first,
// and returns an error answer's code, field and message.
func TestCallWaitsForItsAnswer(t *testing.T) {
	url, got, send := fakeServer(t, "secret")
	c, err := DialOptions(context.Background(), url, "secret", Options{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type result struct {
		data json.RawMessage
		err  error
	}
	call := func(action string) <-chan result {
		r := make(chan result, 1)
		go func() {
			data, err := c.Call(context.Background(), "management", "", action, nil)
			r <- result{data, err}
		}()
		return r
	}
	first := call("list_adopted")
	m := recv(t, got)
	if m["type"] != "management" || m["action"] != "list_adopted" || m["id"] != "test-1" {
		t.Fatalf("sent %v", m)
	}
	send <- map[string]any{"type": "state", "node": "tracks", "data": map[string]any{}}
	send <- map[string]any{"id": "other", "type": "response", "status": "ok", "data": 1}
	send <- map[string]any{"id": "test-1", "type": "response", "status": "ok", "data": map[string]any{"nodes": []any{}}}
	if r := recv(t, first); r.err != nil || string(r.data) != `{"nodes":[]}` {
		t.Errorf("Call = %s, %v", r.data, r.err)
	}
	second := call("adopt_node")
	m = recv(t, got)
	send <- map[string]any{"id": m["id"], "type": "response", "status": "error", "message": "node_id: missing",
		"error": map[string]any{"code": "invalid_params", "field": "node_id", "message": "node_id: missing"}}
	r := recv(t, second)
	var ce *CallError
	if !errors.As(r.err, &ce) || ce.Code != "invalid_params" || ce.Field != "node_id" || ce.Message != "node_id: missing" {
		t.Errorf("error answer: %v, want a CallError naming node_id", r.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Call(ctx, "management", "", "list_adopted", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with an ended context: %v", err)
	}
}

// Do passes a request through as it is, with the client's id, and returns
// the whole answer, an error answer included.
func TestDoReturnsTheWholeAnswer(t *testing.T) {
	url, got, send := fakeServer(t, "secret")
	c, err := DialOptions(context.Background(), url, "secret", Options{Name: "scenario"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := make(chan map[string]any, 1)
	go func() {
		m, err := c.Do(context.Background(), map[string]any{"type": "command", "target": "head", "action": "move", "id": "mine"})
		if err != nil {
			t.Error(err)
		}
		r <- m
	}()
	m := recv(t, got)
	if m["id"] != "scenario-1" || m["target"] != "head" {
		t.Fatalf("sent %v", m)
	}
	send <- map[string]any{"id": "scenario-1", "type": "response", "status": "error", "message": "head: no node", "error": map[string]any{"code": "failed"}}
	if a := recv(t, r); a["status"] != "error" || a["message"] != "head: no node" || a["error"].(map[string]any)["code"] != "failed" {
		t.Errorf("Do = %v", a)
	}
}
