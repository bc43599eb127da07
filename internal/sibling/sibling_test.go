package sibling

import (
	"os"
	"path/filepath"
	"testing"
)

// A command on $PATH is found there; one that exists nowhere falls back
// to go run of the project's cmd/ directory.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "saint-sibling-test")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, args, err := Command("saint-sibling-test"); err != nil || p != exe || args != nil {
		t.Errorf("Command on $PATH = %q %q %v, want %q", p, args, err, exe)
	}
	p, args, err := Command("saint-nowhere")
	if err != nil {
		t.Skipf("no go on $PATH: %v", err)
	}
	if filepath.Base(p) != "go" || len(args) != 2 || args[0] != "run" || args[1] != "github.com/saint-os/saint/cmd/saint-nowhere" {
		t.Errorf("Command of a missing program = %q %q, want go run of cmd/saint-nowhere", p, args)
	}
}
