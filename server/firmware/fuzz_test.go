package firmware

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

// No upload makes the ELF check panic.
func FuzzCheckExecutable(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte("not an executable"))
	if exe, err := os.Executable(); err == nil {
		if b, err := os.ReadFile(exe); err == nil && len(b) > 4096 {
			f.Add(b[:4096]) // a real header, truncated
		}
	}
	f.Fuzz(func(t *testing.T, image []byte) {
		_ = CheckExecutable(image, elf.EM_AARCH64)
		_ = CheckExecutable(image, elf.EM_X86_64)
	})
}

// Whatever manifest.json holds, opening the repository never panics, and
// what it offers is the image on disk.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"firmware":{"version":"1.0.0","checksum_sha256":"` + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" + `","size_bytes":4}}`))
	f.Add([]byte(`{"firmware":{"version":"1.0.0","checksum_sha256":"x","signature":"AAAA","signing_key":"ed25519:AAAA"}}`))
	f.Add([]byte(`{"firmware":`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "current"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ImagePath), []byte("test"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestPath), manifest, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir, "")
		if err != nil {
			return
		}
		for _, require := range []bool{false, true} {
			if err := r.RequireSignatures(require); err != nil {
				return
			}
			resp := r.Check(msg.FirmwareCheckRequest{NodeID: "n", CurrentVersion: "0.0.0"})
			if resp.UpdateAvailable && !strings.EqualFold(resp.ChecksumSHA256, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08") {
				t.Fatalf("offered sha256 %s, not the image's", resp.ChecksumSHA256)
			}
		}
	})
}
