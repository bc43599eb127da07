package sibling

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command beside the running program or on $PATH is found there; one
// that is nowhere is an error naming it and how to build it, not a go run.
func TestPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "saint-sibling-test")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, err := Path("saint-sibling-test"); err != nil || p != exe {
		t.Errorf("Path on $PATH = %q %v, want %q", p, err, exe)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := Path(filepath.Base(self)); err != nil || p != self {
		t.Errorf("Path of the program itself = %q %v, want %q (beside it)", p, err, self)
	}
	_, err = Path("saint-nowhere")
	if err == nil {
		t.Fatal("Path of a missing command: no error")
	}
	for _, want := range []string{"saint-nowhere not found", "go build -o bin/ ./cmd/...", self} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
