package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// TestTemporaryDataDirectory: started without --data, saint-sim keeps its
// state in a new temporary directory and removes it when it exits, on an
// interrupt, on SIGTERM and when it fails after making it; --keep-data
// keeps it, and a directory given with --data is never removed.
func TestTemporaryDataDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-sim")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "saint-sim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// tmpDirs lists the directories saint-sim made in tmp.
	tmpDirs := func(tmp string) []string {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(tmp, "saint-sim-*"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// run starts saint-sim with TMPDIR=tmp, waits until it listens, checks
	// its data directory is in use, stops it with sig and returns the
	// data directories left in tmp.
	run := func(t *testing.T, tmp string, sig os.Signal, args ...string) []string {
		t.Helper()
		addrFile := filepath.Join(tmp, "addrs.json")
		cmd := exec.Command(bin, append([]string{"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--addr-file", addrFile}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		logf, err := os.Create(filepath.Join(t.TempDir(), "saint-sim.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("saint-sim log:\n%s", b)
			}
		})
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
			b, err := os.ReadFile(addrFile)
			if err != nil {
				return err
			}
			return json.Unmarshal(b, new(map[string]string))
		})
		if len(args) == 0 || args[0] == "--keep-data" {
			made := tmpDirs(tmp)
			if len(made) != 1 {
				t.Fatalf("running without --data: data directories %v in %s, want one", made, tmp)
			}
			if _, err := os.Stat(filepath.Join(made[0], "config", "routes")); err != nil {
				t.Fatalf("the temporary data directory holds no configuration: %v", err)
			}
		}
		_ = cmd.Process.Signal(sig)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("saint-sim on %v: %v", sig, err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("saint-sim did not exit on %v", sig)
		}
		return tmpDirs(tmp)
	}

	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(fmt.Sprint(sig), func(t *testing.T) {
			if left := run(t, t.TempDir(), sig); len(left) != 0 {
				t.Errorf("after %v, the temporary data directory is still there: %v", sig, left)
			}
		})
	}
	t.Run("keep-data", func(t *testing.T) {
		left := run(t, t.TempDir(), os.Interrupt, "--keep-data")
		if len(left) != 1 {
			t.Fatalf("with --keep-data: %v left, want the data directory", left)
		}
		if _, err := os.Stat(filepath.Join(left[0], "config", "routes")); err != nil {
			t.Errorf("with --keep-data, the data directory lost its contents: %v", err)
		}
	})
	t.Run("data", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		tmp := t.TempDir()
		if left := run(t, tmp, os.Interrupt, "--data", data); len(left) != 0 {
			t.Errorf("with --data, saint-sim made %v", left)
		}
		if _, err := os.Stat(filepath.Join(data, "config", "routes")); err != nil {
			t.Errorf("the --data directory is gone or empty: %v", err)
		}
	})
	t.Run("failed start", func(t *testing.T) {
		// The web port taken: saint-sim fails after making the directory.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		tmp := t.TempDir()
		out, err := exec.Command("env", "TMPDIR="+tmp, bin, "--http", l.Addr().String(), "--ws", "127.0.0.1:0").CombinedOutput()
		if err == nil {
			t.Fatalf("saint-sim started on a taken port:\n%s", out)
		}
		if left := tmpDirs(tmp); len(left) != 0 {
			t.Errorf("after a failed start, the temporary data directory is still there: %v\n%s", left, out)
		}
	})
}
