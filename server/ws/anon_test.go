package ws

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
)

// syncBuffer is a log sink written from the gateway's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) lines(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), substr)
}

// Unauthenticated sessions, and unauthenticated clients cut off for their
// rate, are logged per address, not one by one, and OnConnect and
// OnDisconnect hear only of authenticated sessions.
func TestUnauthenticatedSessionsAggregated(t *testing.T) {
	var logs syncBuffer
	var connects, disconnects atomic.Int64
	a := &fixedAuth{token: "s3cret-token-0123456789", required: true}
	_, url := securedGateway(t, Options{Auth: a, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		RatePerSecond: 1, RateBurst: 1, AbuseLimit: 2,
		OnConnect:    func(ClientInfo) { connects.Add(1) },
		OnDisconnect: func(ClientInfo) { disconnects.Add(1) }})
	for i := range 20 {
		c, _, err := dialHeader(t, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			// Over the rate: the server cuts the client off (1008).
			for range 3 {
				_ = c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"management","action":"echo"}`))
			}
			_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			for {
				if _, _, err := c.conn.ReadMessage(); err != nil {
					break
				}
			}
		}
		c.conn.Close()
	}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if logs.lines("closed without authenticating") == 0 || logs.lines("over its rate limit") == 0 {
			return fmt.Errorf("log %q: want the sessions and the cut-offs told", logs.String())
		}
		return nil
	})
	authed, _, err := dialHeader(t, url, map[string][]string{"Authorization": {"Bearer " + a.token}})
	if err != nil {
		t.Fatal(err)
	}
	authed.conn.Close()
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if disconnects.Load() == 0 {
			return errors.New("the authenticated session's end was not told")
		}
		return nil
	})
	if n := logs.lines("closed without authenticating"); n != 1 {
		t.Errorf("%d session lines for 20 unauthenticated sessions, want 1 (the rest counted)", n)
	}
	if n := logs.lines("over its rate limit"); n != 1 {
		t.Errorf("%d cut-off lines for 10 unauthenticated clients, want 1", n)
	}
	if connects.Load() != 1 || disconnects.Load() != 1 {
		t.Errorf("OnConnect %d, OnDisconnect %d times: want once each, for the authenticated session", connects.Load(), disconnects.Load())
	}
}
