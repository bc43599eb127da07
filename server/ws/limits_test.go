package ws

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
)

// Connections beyond the per-address cap are refused before the upgrade
// with 429 and the reason; closing one makes room again. The global cap
// refuses with 503.
func TestConnectionCaps(t *testing.T) {
	for _, c := range []struct {
		name     string
		o        Options
		wantCode int
		wantText string
	}{
		{"per address", Options{MaxConnsPerAddr: 3}, http.StatusTooManyRequests, "from 127.0.0.1"},
		{"global", Options{MaxConns: 3}, http.StatusServiceUnavailable, "the server's limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(New(c.o))
			defer srv.Close()
			url := "ws" + strings.TrimPrefix(srv.URL, "http")
			var conns []*websocket.Conn
			defer func() {
				for _, cn := range conns {
					cn.Close()
				}
			}()
			for i := range 3 {
				cn, _, err := websocket.DefaultDialer.Dial(url, nil)
				if err != nil {
					t.Fatalf("connection %d within the cap: %v", i, err)
				}
				conns = append(conns, cn)
			}
			_, resp, err := websocket.DefaultDialer.Dial(url, nil)
			if err == nil || resp == nil || resp.StatusCode != c.wantCode {
				t.Fatalf("a 4th connection: %v (response %v), want %d", err, resp, c.wantCode)
			}
			buf := make([]byte, 512)
			n, _ := resp.Body.Read(buf)
			if !strings.Contains(string(buf[:n]), c.wantText) {
				t.Errorf("refusal %q does not say %q", buf[:n], c.wantText)
			}
			conns[0].Close()
			conns = conns[1:]
			var again *websocket.Conn
			// The server notices the close asynchronously.
			bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				var err error
				if again, _, err = websocket.DefaultDialer.Dial(url, nil); err != nil {
					return fmt.Errorf("after closing one, a new connection: %w", err)
				}
				return nil
			})
			conns = append(conns, again)
		})
	}
}
