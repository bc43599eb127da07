package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/foxglove"
)

// netDialerFrom dials from ip, a loopback address (the whole of
// 127.0.0.0/8 is this machine), so a test can be two clients.
func netDialerFrom(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
}

func wsDialerFrom(ip string) *websocket.Dialer {
	return &websocket.Dialer{NetDialContext: netDialerFrom(ip).DialContext, HandshakeTimeout: 10 * time.Second}
}

func httpFrom(ip string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: netDialerFrom(ip).DialContext}, Timeout: 10 * time.Second}
}

// dialAPIFrom is dialAPI from the loopback address ip.
func dialAPIFrom(t testing.TB, ip, url string, header http.Header) (*apiClient, *http.Response, error) {
	t.Helper()
	conn, resp, err := wsDialerFrom(ip).Dial(url, header)
	if err != nil {
		return nil, resp, err
	}
	c := &apiClient{t: t, conn: conn, resps: map[string]chan map[string]any{},
		states: make(chan map[string]any, 1024), closed: make(chan error, 1)}
	t.Cleanup(func() { conn.Close() })
	go c.readLoop()
	return c, resp, nil
}

type activityLog struct {
	Events []activity.Event `json:"events"`
	Total  int              `json:"total"`
}

// sessions opens and closes n unauthenticated WebSocket sessions to url
// from this machine, eight at a time, and returns how many the server
// accepted (it refuses beyond 64 open from one address, which sessions
// closed but not yet reaped may briefly reach).
func sessions(t *testing.T, url string, n int) int {
	t.Helper()
	var accepted, next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
				if err != nil {
					if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
						t.Errorf("session: %v", err)
						return
					}
					continue
				}
				accepted.Add(1)
				conn.Close()
			}
		}()
	}
	wg.Wait()
	return int(accepted.Load())
}

// 10,000 WebSocket sessions that never authenticate, then 300 that do,
// against a log whose ring holds 200 events a tier and whose files are
// small: the last warning is still what get_activity_log shows, the
// unauthenticated sessions make a handful of events (not 20,000), and the
// warning survives the files' rotation and a restart.
func TestUnauthenticatedSessionsCannotFlushTheActivityLog(t *testing.T) {
	broker := mem.NewBroker()
	busFor := func(string) bus.Bus { return broker.Connect(nil) }
	r := newRobotWith(t, busFor, nil, func(o *server.Options) {
		o.Activity = activity.Options{RingSize: 200, MaxFileBytes: 16 << 10, Files: 2}
	})
	token := r.srv.Token()

	// The warning to keep: a wrong token from another address.
	other, _, err := dialAPIFrom(t, "127.0.0.3", r.wsURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	other.fails("auth", "", "", map[string]any{}, "invalid_params", "token")
	if m := other.sendRaw("w", `{"id":"w","type":"auth","token":"not-the-token"}`); m["status"] != "error" {
		t.Fatalf("wrong token: %v", m)
	}
	admin, _, err := dialAPIFrom(t, "127.0.0.2", r.wsURL(), bearer(token))
	if err != nil {
		t.Fatal(err)
	}
	var log activityLog
	admin.ok("management", "", "get_activity_log", map[string]any{"level": "WARN", "limit": 1}, &log)
	if len(log.Events) != 1 || !strings.Contains(log.Events[0].Message, "failed login from 127.0.0.3") {
		t.Fatalf("newest warning %+v, want the failed login from 127.0.0.3", log.Events)
	}
	warning := log.Events[0]

	const n = 10000
	start := time.Now()
	accepted := sessions(t, r.wsURL(), n)
	t.Logf("%d unauthenticated sessions (%d refused at the per-address cap) in %v", accepted, n-accepted, time.Since(start).Round(time.Millisecond))
	if accepted < n*9/10 {
		t.Fatalf("only %d of %d sessions accepted", accepted, n)
	}

	// What the flood logged: per address, not per session.
	log = activityLog{}
	admin.ok("management", "", "get_activity_log", map[string]any{"after_seq": warning.Seq, "source": "websocket", "limit": 1000}, &log)
	if log.Total > 3 {
		t.Errorf("%d websocket events for %d unauthenticated sessions, want a few: %+v", log.Total, accepted, log.Events)
	}
	found := false
	for _, e := range log.Events {
		found = found || strings.Contains(e.Message, "from 127.0.0.1 closed without authenticating")
	}
	if !found {
		t.Errorf("websocket events %+v: want the sessions from 127.0.0.1 told", log.Events)
	}

	// Authenticated sessions keep their own events, and flood the info
	// tier (ring and files) many times over.
	for range 300 {
		c, _, err := dialAPI(t, r.wsURL(), bearer(token))
		if err != nil {
			t.Fatal(err)
		}
		c.conn.Close()
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		var clients struct {
			Clients []struct {
				Authenticated bool `json:"authenticated"`
			} `json:"clients"`
		}
		admin.ok("management", "", "list_clients", nil, &clients)
		authed := 0
		for _, c := range clients.Clients {
			if c.Authenticated {
				authed++
			}
		}
		if authed != 1 {
			return fmt.Errorf("%d authenticated clients connected, want the admin's session alone", authed)
		}
		return nil
	})
	log = activityLog{}
	admin.ok("management", "", "get_activity_log", map[string]any{"search": "WebSocket client disconnected", "limit": 1000}, &log)
	if log.Total < 50 {
		t.Errorf("%d disconnect events kept of 300 authenticated sessions: want their own events", log.Total)
	}

	// The warning is still in get_activity_log, among the warnings and
	// in the Logs page's unfiltered view; the floods added none.
	lastWarning := func(c *apiClient, when string) {
		t.Helper()
		var warnings, all activityLog
		c.ok("management", "", "get_activity_log", map[string]any{"level": "WARN", "limit": 1000}, &warnings)
		var newer []string
		seen := false
		for _, e := range warnings.Events {
			seen = seen || e.Seq == warning.Seq
			if e.Seq > warning.Seq && (e.Source == "websocket" || e.Source == "auth") {
				newer = append(newer, e.Message)
			}
		}
		if !seen || len(newer) > 0 {
			t.Errorf("%s: warnings %+v: want %q, and none from the sessions (%q)", when, warnings.Events, warning.Message, newer)
		}
		c.ok("management", "", "get_activity_log", map[string]any{"limit": 1000}, &all)
		seen = false
		for _, e := range all.Events {
			seen = seen || e.Seq == warning.Seq
		}
		if !seen {
			t.Errorf("%s: the warning is not in the unfiltered log (%d events)", when, all.Total)
		}
	}
	lastWarning(admin, "after the floods")

	// The files rotated (the info tier keeps 2 × 16 KiB), but the
	// warning is in the download and is read back after a restart.
	req, _ := http.NewRequest("GET", "http://"+r.srv.Addrs()["http"]+"/api/logs?download=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var first activity.Event
	_ = json.Unmarshal(body[:strings.IndexByte(string(body), '\n')], &first)
	if !strings.Contains(string(body), warning.Message) || first.Seq > warning.Seq {
		t.Errorf("download (%d bytes, first seq %d): want the warning (seq %d) in it", len(body), first.Seq, warning.Seq)
	}
	if len(body) > 2*2*(16<<10) {
		t.Errorf("download of %d bytes: the files are bounded at 2 × 2 × 16 KiB", len(body))
	}
	r.srv.Shutdown()
	r.startServer(busFor("server"))
	admin, _, err = dialAPIFrom(t, "127.0.0.2", r.wsURL(), bearer(token))
	if err != nil {
		t.Fatal(err)
	}
	lastWarning(admin, "after a restart")
}

// After five wrong tokens an address waits, on every listener that takes
// the token: HTTP and the Foxglove server answer 429 with Retry-After,
// the WebSocket upgrade with a bearer header too, and the auth message
// answers rate_limited and closes the session (1013) — the right token
// included. Another address is not affected, and both the failures and
// the refusals are in the activity log.
func TestWrongTokensAreThrottledPerAddress(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.FoxgloveAddr = "127.0.0.1:0"
		// A long first wait, so the checks below all fall inside it
		// however slow the machine (the wait's end is shown in
		// server/auth's TestGuardBacksOffPerAddress on a manual clock).
		o.TokenGuard.FirstWait = time.Hour
	})
	token := r.srv.Token()
	logsURL := "http://" + r.srv.Addrs()["http"] + "/api/logs?limit=1"
	get := func(from, tok string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", logsURL, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := httpFrom(from).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for i := range 5 {
		if resp := get("127.0.0.1", fmt.Sprintf("wrong-%d", i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	waiting := func(what string, resp *http.Response) {
		t.Helper()
		if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s: %v, want 429", what, resp)
			return
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Errorf("%s: Retry-After %q, want whole seconds", what, resp.Header.Get("Retry-After"))
		}
	}
	waiting("HTTP, wrong token", get("127.0.0.1", "wrong-6"))
	waiting("HTTP, the right token", get("127.0.0.1", token))
	_, resp, err := wsDialerFrom("127.0.0.1").Dial(r.wsURL(), bearer(token))
	if err == nil {
		t.Error("WebSocket upgrade with the right bearer token accepted while waiting")
	}
	waiting("WebSocket upgrade, the right token", resp)
	fox := &websocket.Dialer{NetDialContext: netDialerFrom("127.0.0.1").DialContext, Subprotocols: []string{foxglove.Subprotocol}}
	_, resp, err = fox.Dial("ws://"+r.srv.Addrs()["foxglove"]+"/?token="+token, nil)
	if err == nil {
		t.Error("Foxglove connection with the right token accepted while waiting")
	}
	waiting("Foxglove, the right token", resp)

	anon, _, err := dialAPIFrom(t, "127.0.0.1", r.wsURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := anon.sendRaw("a", fmt.Sprintf(`{"id":"a","type":"auth","token":%q}`, token))
	e, _ := m["error"].(map[string]any)
	if m["status"] != "error" || e["code"] != "rate_limited" || e["field"] != "token" || e["retry_after"] == nil {
		t.Errorf("auth message with the right token while waiting: %v, want rate_limited with retry_after", m)
	}
	if ce := anon.closeError(); ce.Code != websocket.CloseTryAgainLater {
		t.Errorf("session closed with %v, want 1013", ce)
	}

	// Another address: the right token works everywhere.
	if resp := get("127.0.0.2", token); resp.StatusCode != http.StatusOK {
		t.Errorf("HTTP from another address: %d, want 200", resp.StatusCode)
	}
	admin, _, err := dialAPIFrom(t, "127.0.0.2", r.wsURL(), bearer(token))
	if err != nil {
		t.Fatalf("WebSocket from another address: %v", err)
	}
	fox2 := &websocket.Dialer{NetDialContext: netDialerFrom("127.0.0.2").DialContext, Subprotocols: []string{foxglove.Subprotocol}}
	fc, _, err := fox2.DialContext(context.Background(), "ws://"+r.srv.Addrs()["foxglove"]+"/?token="+token, nil)
	if err != nil {
		t.Errorf("Foxglove from another address: %v", err)
	} else {
		fc.Close()
	}

	var log activityLog
	admin.ok("management", "", "get_activity_log", map[string]any{"source": "auth", "level": "WARN"}, &log)
	var msgs []string
	for _, e := range log.Events {
		msgs = append(msgs, e.Message)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "failed login from 127.0.0.1") || !strings.Contains(all, "login from 127.0.0.1 refused") {
		t.Errorf("auth warnings %q: want the failed login and the refusal", msgs)
	}
	if len(msgs) > 2 {
		t.Errorf("auth warnings %q: want one of each kind per address per minute", msgs)
	}
}

// Wrong tokens from 300 addresses (a stranger with a prefix of his own):
// each address's first is told until the minute's budget is spent, the
// rest are summed, so the warnings before them stay in the log.
func TestManyAddressesCannotFlushTheWarnings(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.Activity = activity.Options{RingSize: 50}
	})
	token := r.srv.Token()
	r.srv.Log().Warn("High motor temperature: 52°C", "source", "tracks", "node", "n-tracks")
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", "http://"+r.srv.Addrs()["http"]+"/api/logs?limit=1", nil)
			req.Header.Set("Authorization", "Bearer wrong")
			resp, err := httpFrom(fmt.Sprintf("127.0.%d.%d", 10+i/250, 1+i%250)).Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("wrong token: %d, want 401", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	admin, _, err := dialAPI(t, r.wsURL(), bearer(token))
	if err != nil {
		t.Fatal(err)
	}
	var log activityLog
	admin.ok("management", "", "get_activity_log", map[string]any{"level": "WARN", "source": "auth", "limit": 1000}, &log)
	if log.Total == 0 || log.Total > 21 {
		t.Errorf("%d failed-login warnings for 300 addresses, want at most 21 (20 and the summary to come)", log.Total)
	}
	log = activityLog{}
	admin.ok("management", "", "get_activity_log", map[string]any{"level": "WARN", "source": "tracks"}, &log)
	if log.Total != 1 {
		t.Errorf("the motor warning is gone after 300 addresses' wrong tokens: %+v", log)
	}
}
