package node_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roleconfig"
)

// storeFiles are the node's persisted state files that a power cut, a
// full SD card or a hand edit can leave in any state.
var storeFiles = []string{"role.yaml", "identity.yaml", "firmware/installed.yaml", "firmware/previous.yaml",
	"firmware/rejected.yaml", "firmware/download.yaml"}

// Whatever bytes one of the node's state files holds, reading the store
// never panics; a role it loads has the configuration its checksum names,
// and an identity it loads is written back and read again the same.
func FuzzStoreFiles(f *testing.F) {
	f.Add(uint8(0), []byte("assigned_role: head\nassigned_at: \"2026-01-01T00:00:00Z\"\nassigned_by: server\nconfig_version: \"1\"\n"))
	f.Add(uint8(1), []byte("node_id: n-1\nmac_address: \"02:00:00:00:00:01\"\nfirst_seen: \"2026-01-01\"\n"))
	f.Add(uint8(2), []byte("version: 1.2.0\nchecksum_sha256: abc\nsize_bytes: 12\n"))
	f.Add(uint8(4), []byte("- version: 1.2.0\n  checksum_sha256: ABC\n  reason: crashed\n"))
	f.Add(uint8(5), []byte("version: 1.2.0\nchecksum_sha256: abc\nsize_bytes: -1\n"))
	f.Add(uint8(0), []byte("assigned_role: [a, b]\n"))
	// What a bug, an editor or a torn write leaves: null, nothing, a
	// truncation, garbage.
	for which := range storeFiles {
		for _, d := range []string{"null", "~", "", "\n", "assigned_role: he", "node_id: \"n-", "- version: 1.2.0\n  checksum_sha256: \"AB", "\x00\x00\x00"} {
			f.Add(uint8(which), []byte(d))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		dir := t.TempDir()
		name := storeFiles[int(which)%len(storeFiles)]
		if err := os.MkdirAll(filepath.Join(dir, "firmware"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		config := []byte("role: head\nversion: \"1\"\n")
		if err := os.WriteFile(filepath.Join(dir, "role_config.yaml"), config, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := node.NewStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, got, ok, err := s.LoadRole()
		if errors.Is(err, persist.ErrDamaged) {
			if _, serr := os.Stat(filepath.Join(dir, "role.yaml")); !os.IsNotExist(serr) {
				t.Fatalf("a damaged role.yaml (%v) was left in place", err)
			}
		}
		if ok {
			if err != nil || rec.AssignedRole == "" {
				t.Fatalf("LoadRole: ok with %+v, %v", rec, err)
			}
			if rec.ConfigChecksum != "" && rec.ConfigChecksum != roleconfig.Checksum(got) {
				t.Fatalf("LoadRole: configuration does not match checksum %s", rec.ConfigChecksum)
			}
		}
		id, ok, err := s.LoadIdentity()
		if errors.Is(err, persist.ErrDamaged) {
			if _, serr := os.Stat(filepath.Join(dir, "identity.yaml")); !os.IsNotExist(serr) {
				t.Fatalf("a damaged identity.yaml (%v) was left in place", err)
			}
		}
		if ok && err == nil {
			if err := s.SaveIdentity(id); err != nil {
				t.Fatal(err)
			}
			again, ok, err := s.LoadIdentity()
			if !ok || err != nil || again != id {
				t.Fatalf("identity %+v read back as %+v (%v, %v)", id, again, ok, err)
			}
		}
		s.InstalledFirmware()
		s.PreviousFirmware()
		s.RejectedFirmware("1.2.0", "abc")
		if part := s.PartialDownload("1.2.0", "abc", 12); len(part) > 12 {
			t.Fatalf("a partial download of %d bytes for a 12-byte image", len(part))
		}
	})
}
