package feature_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

func newHost(t *testing.T) (*feature.Host, *mem.Bus) {
	t.Helper()
	ex := bustest.RunExecutor(t)
	b := mem.New()
	t.Cleanup(func() { _ = b.Close() })
	guard := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	return feature.NewHost(feature.Options{Gateway: ws.New(ws.Options{}), Exec: ex, Bus: b, Protect: guard}), b
}

// TestHostLifecycle: components start in the order they were added and
// stop when told; a typed subscription passes on what decodes and skips
// what does not; HTTP routes are guarded; OnClose runs once.
func TestHostLifecycle(t *testing.T) {
	h, b := newHost(t)
	var order []string
	h.Add(feature.Funcs{OnStart: func() error { order = append(order, "a"); return nil }, OnStop: func() { order = append(order, "-a") }})
	got := make(chan msg.EStop, 4)
	feature.Subscribe(h, "/test/estop", bus.QoS{Depth: 8}, func(_ string, e msg.EStop) { got <- e })
	h.Add(feature.Funcs{OnStart: func() error { order = append(order, "b"); return nil }})
	h.HandleHTTP("GET /x", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("x")) }))
	closed := 0
	h.OnClose(func() { closed++ })

	cs := h.Components()
	if len(cs) != 3 {
		t.Fatalf("%d components, want 3", len(cs))
	}
	if err := h.Do(context.Background(), func() {
		for _, c := range cs {
			if err := c.Start(); err != nil {
				t.Error(err)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish("/test/estop", "not an e-stop"); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish("/test/estop", msg.EStop{Active: true, Source: "test"}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if !e.Active || e.Source != "test" {
			t.Errorf("got %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the e-stop did not arrive")
	}
	select {
	case e := <-got:
		t.Errorf("a second message %+v: the one that does not decode was passed on", e)
	case <-time.After(50 * time.Millisecond):
	}
	_ = h.Do(context.Background(), func() {
		for i := len(cs) - 1; i >= 0; i-- {
			cs[i].Stop()
		}
	})
	if strings.Join(order, ",") != "a,b,-a" {
		t.Errorf("lifecycle %v, want a,b,-a", order)
	}
	// After Stop the subscription is gone.
	_ = b.Publish("/test/estop", msg.EStop{Active: true})
	select {
	case e := <-got:
		t.Errorf("%+v arrived after Stop", e)
	case <-time.After(50 * time.Millisecond):
	}

	rec := httptest.NewRecorder()
	h.HTTP().ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("unguarded route: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header.Set("Authorization", "Bearer t")
	h.HTTP().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "x" {
		t.Errorf("guarded route with the token: %d %q", rec.Code, rec.Body.String())
	}
	h.Close()
	h.Close()
	if closed != 1 {
		t.Errorf("OnClose ran %d times, want 1", closed)
	}
}
