package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
)

// With authentication off, a request whose Host is not the loopback (a
// DNS-rebinding page) is refused; a cross-origin POST (a page on another
// site posting a firmware image) is refused with or without
// authentication, while the same origin and programs without an Origin
// reach the handler.
func TestHostAndOriginChecks(t *testing.T) {
	srv, err := server.New(server.Options{Bus: mem.NewBroker().Connect(nil), ConfigDir: configDir, DataDir: t.TempDir(),
		HTTPAddr: "127.0.0.1:0", NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	addr := srv.Addrs()["http"]
	do := func(method, host, origin string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+"/api/firmware?version=9.0.0&sha256=00", strings.NewReader("image"))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "rebound.example:8000", ""); code != http.StatusMisdirectedRequest || !strings.Contains(body, "rebound.example") {
		t.Errorf("foreign Host with auth off: %d %q, want 421 naming it", code, body)
	}
	for _, host := range []string{"", "localhost:8000", "[::1]:8000"} {
		if code, _ := do("GET", host, ""); code == http.StatusMisdirectedRequest {
			t.Errorf("Host %q refused", host)
		}
	}
	if code, body := do("POST", "", "http://evil.example"); code != http.StatusForbidden || !strings.Contains(body, "evil.example") {
		t.Errorf("cross-origin POST: %d %q, want 403 naming the origin", code, body)
	}
	for _, origin := range []string{"http://" + addr, ""} {
		if code, body := do("POST", "", origin); code == http.StatusForbidden || code == http.StatusMisdirectedRequest {
			t.Errorf("POST with Origin %q refused: %d %q", origin, code, body)
		}
	}
}
