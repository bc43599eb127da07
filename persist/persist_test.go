package persist

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "role.yaml")
	if err := WriteFile(p, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("a: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "a: 2\n" {
		t.Errorf("content = %q", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory in the way of the rename makes the write fail.
	bad := filepath.Join(dir, "d")
	if err := os.MkdirAll(filepath.Join(bad, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(bad, []byte("new"), 0o644); err == nil {
		t.Fatal("writing over a non-empty directory succeeded")
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Errorf("unrelated file changed: %q", got)
	}
	if err := Remove(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Remove of a missing file: %v", err)
	}
}

func TestMoveAside(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "adopted.json")
	if err := os.WriteFile(p, []byte("[{"), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 23, 40, 1, 0, time.UTC)
	dst, err := MoveAside(p, at)
	if err != nil {
		t.Fatal(err)
	}
	if want := p + ".corrupt-20261124T234001.000Z"; dst != want {
		t.Errorf("moved to %s, want %s", dst, want)
	}
	if b, err := os.ReadFile(dst); err != nil || string(b) != "[{" {
		t.Errorf("moved file: %q, %v", b, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the damaged file is still there: %v", err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := MoveAside(p, at); err == nil {
		t.Error("MoveAside overwrote an earlier copy")
	}
}
