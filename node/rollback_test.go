package node_test

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fwsign"
	simboard "github.com/saint-os/saint/sim/board"
)

// A node refuses a signed release older than the newest it has installed
// (0.3.0 → 0.2.5) — downloading nothing and staying ACTIVE — unless the
// offer carries the release key's downgrade permission for that version:
// one signed by another key, or for another version, is refused too. The
// floor stays at 0.3.0 after the permitted downgrade and across a restart,
// so 0.2.9 is refused then; 0.3.1 raises it.
func TestDowngradeNeedsTheReleaseKeysPermission(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, forger, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRigWith(t, simboard.Console, func(r *rig) {
		r.firmwareKeys = []ed25519.PublicKey{pub}
		r.version = "0.3.0"
	})
	r.run(time.Second)
	if resp := r.adopt("console", ""); !resp.Success {
		t.Fatalf("adopt: %+v", resp)
	}
	r.run(time.Second)
	checkFloor(t, r, "0.3.0")

	offer := func(version, downgrade string) {
		t.Helper()
		r.srv.publish(version, bytes.Repeat([]byte(version), 700))
		r.srv.sig = fwsign.Sign(priv, version, r.srv.sum, int64(len(r.srv.image)))
		r.srv.downgrade = downgrade
		var upd msg.NodeUpdateResponse
		r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1", Force: true}, &upd)
		r.run(3 * time.Second)
	}
	refused := func(name, running string) {
		t.Helper()
		from := len(r.statuses)
		offer(r.srv.version, r.srv.downgrade)
		said := false
		for _, s := range r.statuses[from:] {
			said = said || strings.Contains(s.Message, "refused") && strings.Contains(s.Message, "older than")
		}
		if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != running || r.state() != msg.StateActive || !said {
			t.Errorf("%s: running %s in %s (refusal said: %v), want %s, ACTIVE and a status saying why", name, st.FirmwareVersion, r.state(), said, running)
		}
	}
	for _, c := range []struct{ name, version, downgrade string }{
		{"no permission", "0.2.5", ""},
		{"a permission signed by another key", "0.2.5", fwsign.SignDowngrade(forger, "0.2.5")},
		{"a permission for another version", "0.2.5", fwsign.SignDowngrade(priv, "0.2.4")},
		{"the release signature as permission", "0.2.5", ""},
	} {
		r.srv.publish(c.version, bytes.Repeat([]byte(c.version), 700))
		r.srv.downgrade = c.downgrade
		if c.name == "the release signature as permission" {
			r.srv.downgrade = fwsign.Sign(priv, c.version, r.srv.sum, int64(len(r.srv.image)))
		}
		downloads := r.srv.downloads
		refused(c.name, "0.3.0")
		if r.srv.downloads != downloads {
			t.Errorf("%s: %d download requests for a refused downgrade", c.name, r.srv.downloads-downloads)
		}
		if _, ok := r.node.Store().InstalledFirmware(); ok {
			t.Errorf("%s: an image was installed", c.name)
		}
	}

	offer("0.2.5", fwsign.SignDowngrade(priv, "0.2.5"))
	if inst, ok := r.node.Store().InstalledFirmware(); !ok || inst.Version != "0.2.5" {
		t.Fatalf("with the permission: installed %+v (%v), want 0.2.5", inst, ok)
	}
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "0.2.5" {
		t.Fatalf("with the permission: running %s, want 0.2.5", st.FirmwareVersion)
	}
	checkFloor(t, r, "0.3.0")

	// A restart running 0.2.5, as a real node re-executes into it.
	r.crash()
	r.version = "0.2.5"
	r.boot()
	r.run(2 * time.Second)
	checkFloor(t, r, "0.3.0")
	r.srv.publish("0.2.9", bytes.Repeat([]byte("0.2.9"), 700))
	r.srv.downgrade = ""
	refused("0.2.9 after the restart", "0.2.5")

	offer("0.3.1", "")
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "0.3.1" {
		t.Fatalf("0.3.1: running %s", st.FirmwareVersion)
	}
	checkFloor(t, r, "0.3.1")
}

// checkFloor checks the node's anti-rollback floor, in memory and on disk.
func checkFloor(t *testing.T, r *rig, want string) {
	t.Helper()
	if got := r.node.FirmwareFloor(); got != want {
		t.Errorf("floor %s, want %s", got, want)
	}
	if f, ok, err := r.node.Store().FirmwareFloor(); err != nil || !ok || f.Version != want {
		t.Errorf("floor on disk %+v (%v, %v), want %s", f, ok, err, want)
	}
}

// A damaged floor file (null, empty, truncated, garbled) is moved aside
// and the floor starts again from the running version: downgrades below
// it are refused, never let through.
func TestDamagedFirmwareFloor(t *testing.T) {
	for _, bad := range []string{"null", "", "version: [0.3", "\x00\xff garbage"} {
		r := newRigWith(t, simboard.Console, func(r *rig) {
			if err := os.WriteFile(filepath.Join(r.dir, "firmware_floor.yaml"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
		})
		r.run(time.Second)
		checkFloor(t, r, "1.0.0")
		aside, _ := filepath.Glob(filepath.Join(r.dir, "firmware_floor.yaml.corrupt-*"))
		if len(aside) != 1 {
			t.Errorf("floor file %q: moved aside as %v, want one file", bad, aside)
		}
		r.srv.publish("0.9.0", []byte("older image"))
		var upd msg.NodeUpdateResponse
		r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1", Force: true}, &upd)
		r.run(3 * time.Second)
		if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "1.0.0" {
			t.Errorf("floor file %q: 0.9.0 offered, running %s; want 1.0.0 kept", bad, st.FirmwareVersion)
		}
	}
}
