package ws

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// CallerOf names a WebSocket client by its id, with a Done that closes
// when its connection does; without a client, the Caller WithCaller put in
// the context, or the zero Caller.
func TestCallerOf(t *testing.T) {
	callers := make(chan Caller, 2)
	g := New(Options{})
	g.HandleCommand("head", "camera", func(ctx context.Context, c *Client, _ json.RawMessage) (any, error) {
		callers <- CallerOf(ctx, c)
		return nil, nil
	})
	srv := httptest.NewServer(g)
	defer srv.Close()
	var seen []Caller
	for range 2 {
		c := dialTest(t, srv.URL)
		if m := c.roundTrip(`{"id":"c","type":"command","target":"head","action":"camera","params":{"enable":true}}`); m["status"] != "ok" {
			t.Fatalf("camera: %v", m)
		}
		seen = append(seen, <-callers)
		c.conn.Close()
	}
	a, b := seen[0], seen[1]
	if !strings.HasPrefix(a.Name, "websocket client ") || !strings.HasPrefix(b.Name, "websocket client ") || a.Name == b.Name {
		t.Fatalf("callers %q and %q, want two different WebSocket clients", a.Name, b.Name)
	}
	for _, cl := range seen {
		select {
		case <-cl.Done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s disconnected, but its Done is open", cl.Name)
		}
	}

	done := make(chan struct{})
	ctx := WithCaller(context.Background(), Caller{Name: "foxglove", Done: done})
	if got := CallerOf(ctx, nil); got.Name != "foxglove" || got.Done != (<-chan struct{})(done) {
		t.Errorf("CallerOf(WithCaller(foxglove)) = %+v", got)
	}
	if got := CallerOf(context.Background(), nil); got.Name != "" || got.Done != nil {
		t.Errorf("CallerOf(no caller) = %+v, want the zero Caller", got)
	}
}
