package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// fakeBalanceServer answers the balance console command as the server
// does, recording the request it got.
func fakeBalanceServer(t *testing.T, ok bool, got chan<- map[string]any) string {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		var req map[string]any
		if err := conn.ReadJSON(&req); err != nil {
			return
		}
		got <- req
		line, _ := req["params"].(map[string]any)["line"].(string)
		_ = conn.WriteJSON(map[string]any{"type": "response", "id": req["id"], "status": "ok",
			"data": map[string]any{"output": "did " + line, "ok": ok}})
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestBalanceSubcommand(t *testing.T) {
	reqs := make(chan map[string]any, 1)
	url := fakeBalanceServer(t, true, reqs)
	var out bytes.Buffer
	if err := run([]string{"--server", url, "balance", "speed_limit", "20"}, &out); err != nil {
		t.Fatal(err)
	}
	req := <-reqs
	if req["type"] != "command" || req["target"] != "balance" || req["action"] != "console" {
		t.Errorf("request %v, want command balance console", req)
	}
	if line := req["params"].(map[string]any)["line"]; line != "speed_limit 20" {
		t.Errorf("line %q, want %q", line, "speed_limit 20")
	}
	if out.String() != "did speed_limit 20\n" {
		t.Errorf("printed %q", out.String())
	}
}

func TestBalanceSubcommandRefused(t *testing.T) {
	url := fakeBalanceServer(t, false, make(chan map[string]any, 2))
	var out bytes.Buffer
	err := run([]string{"--server", url, "balance", "arm"}, &out)
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(out.String(), "did arm") {
		t.Errorf("err %v output %q, want the output and a refusal", err, out.String())
	}
	if err := run([]string{"--server", url, "balance"}, &out); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no command: %v", err)
	}
}
