package client

import (
	"context"
	"encoding/json"
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
	send <- map[string]any{"id": "viz-2", "type": "response", "status": "error", "message": "tracks: e-stop active"}
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
