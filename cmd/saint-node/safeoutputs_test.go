package main

import (
	"bytes"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/internal/sdnotify"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/roleconfig"
)

// saint-node safe-outputs reads the adopted role from the state directory
// and applies its plan to the hardware, every step even when one fails;
// an unadopted node has nothing to do.
func TestSafeOutputsCommand(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"SERVICE_RESULT": "watchdog", "EXIT_CODE": "killed", "EXIT_STATUS": "ABRT"}[k]
	}
	var out bytes.Buffer
	if err := runSafeOutputs([]string{"--state-dir", dir, "--hal", "sim", "--sim-hw", "tracks"}, &out, env); err != nil {
		t.Fatalf("unadopted: %v\n%s", err, &out)
	}
	data, err := fs.ReadFile(fixtures.Config(), "roles/tracks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, err := node.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveRole(node.RoleRecord{AssignedRole: "tracks", ConfigChecksum: roleconfig.Checksum(data)}, data); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runSafeOutputs([]string{"--state-dir", dir, "--hal", "sim", "--sim-hw", "tracks"}, &out, env); err != nil {
		t.Fatalf("tracks on the tracks board: %v\n%s", err, &out)
	}
	// A board without the tracks' PCA9685: that step fails and says so,
	// the enables are still driven low.
	out.Reset()
	err = runSafeOutputs([]string{"--state-dir", dir, "--hal", "sim", "--sim-hw", "bare"}, &out, env)
	if err == nil || !strings.Contains(err.Error(), "PCA9685 1:0x41 all off") || strings.Contains(err.Error(), "GPIO5") {
		t.Fatalf("tracks on a bare board: %v, want only the PCA9685 step failed\n%s", err, &out)
	}
	if err := runSafeOutputs([]string{"--state-dir", dir, "--hal", "mars"}, &out, env); err == nil {
		t.Error("--hal mars accepted")
	}
}

// Before it execs a firmware image the node gives it execWatchdogTime to
// boot (WATCHDOG_USEC=), and sets the unit's time back if the exec fails.
func TestExecExtendsTheWatchdogTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	t.Setenv("WATCHDOG_USEC", "2000000")
	t.Setenv("WATCHDOG_PID", "")
	sd, err := sdnotify.New(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	exec := execWithWatchdogTime(sd, slog.New(slog.NewTextHandler(io.Discard, nil)))
	missing := filepath.Join(t.TempDir(), "no-such-image")
	if err := exec(missing, []string{missing}, nil); err == nil {
		t.Fatal("exec of a missing image succeeded")
	}
	var got []string
	buf := make([]byte, 256)
	for len(got) < 2 {
		if err := sock.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		n, err := sock.Read(buf)
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, string(buf[:n]))
	}
	if got[0] != "WATCHDOG_USEC=30000000" || got[1] != "WATCHDOG_USEC=2000000" {
		t.Errorf("notifications %q, want the exec's 30 s then the unit's 2 s back", got)
	}
}
