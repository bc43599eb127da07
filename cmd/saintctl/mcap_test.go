package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/record"
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
			if err := w.Write("/saint/tracks/odom", []byte(`{"x":1}`), at); err != nil {
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
		`/saint/head/state\s+500\s+50.0\s+json\s+saint.head.state \(jsonschema\)`,
		`/saint/tracks/odom\s+100\s+10.0\s+json`,
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
