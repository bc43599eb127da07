package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A server that makes this address wait answers the upgrade 429 with
// Retry-After: saintctl says so and how long, not a bare handshake error.
func TestDialSaysHowLongToWait(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "too many wrong API tokens from this address: retry in 7 s", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	_, err := dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/saint", "a-token")
	if err == nil || !strings.Contains(err.Error(), "retry in 7 s") {
		t.Errorf("dial: %v, want the wait named", err)
	}
}
