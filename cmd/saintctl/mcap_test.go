package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/recording"
	"github.com/saint-os/saint/server/ws"
)

func TestMcapInfo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.mcap")
	w, err := record.Create(file, &record.WriterOptions{ChunkBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 500 {
		at := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		if err := w.Write("/saint/head/state", []byte(`{"pan":1.5,"tilt":-2}`), at); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if err := w.Write("/saint/sim/truth/tracks", []byte(`{"x":1}`), at); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"mcap", "info", file}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`complete:\s+yes`, `messages:\s+600`, `duration:\s+9.980 s`,
		`/saint/head/state\s+500\s+50.0\s+cdr\s+saint_os/msg/HeadState \(ros2msg\)`,
		`/saint/sim/truth/tracks\s+100\s+10.0\s+json\s+saint.sim.truth.tracks \(jsonschema\)`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("mcap info lacks %q:\n%s", want, out.String())
		}
	}

	// A truncated file: the readable part is summarised, and the error
	// gives the offset.
	data, _ := os.ReadFile(file)
	cut := filepath.Join(dir, "cut.mcap")
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	out.Reset()
	err = run([]string{"mcap", "info", cut}, &out)
	if err == nil || !strings.Contains(err.Error(), "byte offset") {
		t.Fatalf("truncated file: %v", err)
	}
	if !regexp.MustCompile(`complete:\s+no`).MatchString(out.String()) || !strings.Contains(out.String(), "/saint/head/state") {
		t.Errorf("truncated file summary:\n%s", out.String())
	}
	if err := run([]string{"mcap", "info", filepath.Join(dir, "missing.mcap")}, &out); err == nil {
		t.Error("a missing file gave no error")
	}
}

// TestRecordSubcommand drives the server's real recording actions on a
// gateway over a bus with a publisher: start, status, stop, then the file
// is complete and holds what was published.
func TestRecordSubcommand(t *testing.T) {
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	defer b.Close()
	ex.Every(5*time.Millisecond, func() { _ = b.Publish("/saint/head/state", map[string]any{"pan": 1}) })
	g := ws.New(ws.Options{})
	if _, err := recording.Register(feature.NewHost(feature.Options{Gateway: g, Exec: ex, Bus: b, Log: slog.New(slog.DiscardHandler)}), recording.Options{Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	type status struct {
		Recording bool     `json:"recording"`
		Files     []string `json:"files"`
		Messages  uint64   `json:"messages"`
	}
	call := func(args ...string) status {
		t.Helper()
		var out bytes.Buffer
		if err := run(append([]string{"--server", url, "record"}, args...), &out); err != nil {
			t.Fatalf("record %v: %v", args, err)
		}
		var st status
		if err := json.Unmarshal(out.Bytes(), &st); err != nil {
			t.Fatalf("record %v printed %q: %v", args, out.String(), err)
		}
		return st
	}
	if st := call("start", "--max-mb", "100"); !st.Recording {
		t.Fatalf("start: %+v", st)
	}
	var out bytes.Buffer
	if err := run([]string{"--server", url, "record", "start"}, &out); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second start: %v", err)
	}
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if st := call("status"); !st.Recording || len(st.Files) != 1 {
			return fmt.Errorf("status: %+v", st)
		}
		return nil
	})
	st := call("stop")
	if st.Recording || len(st.Files) != 1 || st.Messages == 0 {
		t.Fatalf("stop: %+v", st)
	}
	sum, err := record.Summarize(st.Files[0])
	if err != nil || !sum.Complete || sum.Messages != st.Messages {
		t.Fatalf("%s: %+v %v", st.Files[0], sum, err)
	}
	if err := run([]string{"--server", url, "record", "pause"}, &out); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("record pause: %v", err)
	}
}
