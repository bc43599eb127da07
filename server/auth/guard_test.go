package auth

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type manualClock struct{ t time.Time }

func (c *manualClock) now() time.Time          { return c.t }
func (c *manualClock) add(d time.Duration)     { c.t = c.t.Add(d) }
func validIf(tok string) func(string) bool     { return func(s string) bool { return s == tok } }
func check(g *Guard, addr, tok string) Verdict { return g.Check(addr, "http", tok, validIf("right")) }

// After five wrong tokens an address waits, 1 s then doubling up to the
// cap; while it waits even the right token is refused, but another
// address is not affected, and the right token after the wait clears the
// count.
func TestGuardBacksOffPerAddress(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}
	g := NewGuard(GuardOptions{Now: clk.now, MaxWait: 8 * time.Second})
	for i := range 5 {
		if v := check(g, "10.0.0.9", "wrong"); v.OK || v.RetryAfter != 0 {
			t.Fatalf("wrong token %d: %+v, want refused without a wait yet", i+1, v)
		}
	}
	if v := check(g, "10.0.0.9", "right"); v.OK || v.RetryAfter != time.Second || v.RetryAfterSeconds() != 1 {
		t.Fatalf("right token while waiting: %+v, want refused with 1 s to wait", v)
	}
	if v := check(g, "10.0.0.7", "right"); !v.OK {
		t.Fatalf("another address: %+v, want accepted", v)
	}
	// Each wrong token after a wait doubles the next, up to MaxWait.
	for _, want := range []time.Duration{2, 4, 8, 8} {
		clk.add(10 * time.Second)
		check(g, "10.0.0.9", "wrong")
		if v := check(g, "10.0.0.9", "wrong"); v.RetryAfter != want*time.Second {
			t.Fatalf("wait %v, want %v", v.RetryAfter, want*time.Second)
		}
	}
	clk.add(8 * time.Second)
	if v := check(g, "10.0.0.9", "right"); !v.OK {
		t.Fatalf("right token after the wait: %+v, want accepted", v)
	}
	// The count is cleared: five more wrong tokens before a wait.
	for range 5 {
		check(g, "10.0.0.9", "wrong")
	}
	if v := check(g, "10.0.0.9", "wrong"); v.RetryAfter == 0 {
		t.Error("no wait after five wrong tokens")
	}
	// A quiet quarter of an hour forgets the count too.
	clk.add(20 * time.Minute)
	for i := range 5 {
		if v := check(g, "10.0.0.9", "wrong"); v.RetryAfter != 0 {
			t.Fatalf("wrong token %d after 20 quiet minutes: wait %v, want none", i+1, v.RetryAfter)
		}
	}
}

// 1,000 wrong tokens make one failed-login event and one refusal event,
// not a thousand.
func TestGuardLogsAggregated(t *testing.T) {
	var buf bytes.Buffer
	clk := &manualClock{t: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}
	g := NewGuard(GuardOptions{Now: clk.now, Log: slog.New(slog.NewTextHandler(&buf, nil))})
	for range 1000 {
		check(g, "10.0.0.9", "wrong")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "failed login from 10.0.0.9") || !strings.Contains(lines[1], "login from 10.0.0.9 refused") {
		t.Errorf("logged %q, want one failed login and one refusal", lines)
	}
}

// The HTTP API answers 429 with Retry-After once the address must wait,
// the right token included, and 401 before that.
func TestMiddlewareThrottlesWrongTokens(t *testing.T) {
	a, _ := Open(t.TempDir())
	clk := &manualClock{t: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}
	h := a.Middleware(func() bool { return true }, NewGuard(GuardOptions{Now: clk.now}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("secret"))
	}))
	get := func(tok, from string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/api/logs", nil)
		req.RemoteAddr = from + ":40000"
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for i := range 5 {
		if rec := get("wrong", "10.0.0.9"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, rec.Code)
		}
	}
	for _, tok := range []string{"wrong", a.Token()} {
		rec := get(tok, "10.0.0.9")
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || rec.Body.String() == "secret" {
			t.Errorf("token %.5s… while waiting: %d Retry-After %q, want 429 with Retry-After", tok, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
	if rec := get(a.Token(), "10.0.0.7"); rec.Code != http.StatusOK {
		t.Errorf("another address: %d, want 200", rec.Code)
	}
	clk.add(time.Minute)
	if rec := get(a.Token(), "10.0.0.9"); rec.Code != http.StatusOK {
		t.Errorf("after the wait: %d, want 200", rec.Code)
	}
}
