package main

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/saint-os/saint/fixtures"
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
