package recording_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/recording"
	"github.com/saint-os/saint/server/ws"
)

type response struct {
	Status string `json:"status"`
	Data   struct {
		Recording bool     `json:"recording"`
		Files     []string `json:"files"`
		Messages  uint64   `json:"messages"`
	} `json:"data"`
	Error struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestStartStop starts and stops a recording over the WebSocket API, as
// saintctl record does, while a publisher runs on a wall-clock executor.
func TestStartStop(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	n := 0
	ex.Every(5*time.Millisecond, func() {
		n++
		_ = b.Publish("/saint/head/state", map[string]any{"pan": n})
	})

	g := ws.New(ws.Options{})
	dir := t.TempDir()
	h := feature.NewHost(feature.Options{Gateway: g, Exec: ex, Bus: b, Log: slog.New(slog.DiscardHandler)})
	svc, err := recording.Register(h, recording.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(action string, params any) response {
		t.Helper()
		if params == nil {
			params = map[string]any{}
		}
		if err := conn.WriteJSON(map[string]any{"id": action, "type": "management", "action": action, "params": params}); err != nil {
			t.Fatal(err)
		}
		var r response
		if err := conn.ReadJSON(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	if r := call("record_start", map[string]any{"max_bytes": -1}); r.Status != "error" || r.Error.Field != "max_bytes" {
		t.Errorf("max_bytes -1: %+v", r)
	}
	if r := call("record_start", nil); r.Status != "ok" || !r.Data.Recording || len(r.Data.Files) > 1 {
		t.Fatalf("record_start: %+v", r)
	}
	if r := call("record_start", nil); r.Status != "error" || !strings.Contains(r.Error.Message, "already running") {
		t.Errorf("second record_start: %+v", r)
	}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if st := svc.Status(); st.Messages < 50 {
			return fmt.Errorf("recording: %+v", st)
		}
		return nil
	})
	r := call("record_stop", nil)
	if r.Status != "ok" || r.Data.Recording || len(r.Data.Files) != 1 || r.Data.Messages < 50 {
		t.Fatalf("record_stop: %+v", r)
	}
	sum, err := record.Summarize(r.Data.Files[0])
	if err != nil || !sum.Complete || sum.Messages != r.Data.Messages {
		t.Fatalf("%s: %+v %v", r.Data.Files[0], sum, err)
	}
	if r := call("record_status", nil); r.Status != "ok" || r.Data.Recording {
		t.Errorf("record_status after stop: %+v", r)
	}
}

func TestPublishActivity(t *testing.T) {
	l, err := activity.Open(activity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	var got []activity.Event
	if _, err := bus.SubscribeJSON(b, recording.TopicActivity, bus.QoS{}, ex, func(_ string, e activity.Event) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	cancel := recording.PublishActivity(l, b)
	l.Add(activity.Event{Level: "WARN", Source: "router", Message: "route disabled"})
	cancel()
	l.Add(activity.Event{Level: "INFO", Source: "router", Message: "after cancel"})
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Message != "route disabled" || got[0].Source != "router" {
		t.Fatalf("events on the bus: %+v", got)
	}
}
