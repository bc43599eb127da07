package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/server/firmware"
)

// firmware sign-downgrade writes into a published release's manifest a
// permission that verifies with the release key for that version only; it
// refuses another version than the published one, and a key that did not
// sign the release.
func TestSignDowngrade(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	for _, name := range []string{"release", "other"} {
		if err := run([]string{"firmware", "keygen", "--out", dir, "--name", name}, &out); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(dir, "release.key")
	image := filepath.Join(dir, "saint-node")
	if err := os.WriteFile(image, []byte("node image 0.2.5"), 0o755); err != nil {
		t.Fatal(err)
	}
	fw := filepath.Join(dir, "firmware")
	if err := run([]string{"firmware", "publish", "--image", image, "--version", "0.2.5", "--configs", "", "--out", fw, "--sign-key", key}, &out); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{
		{"--sign-key", key, "--version", "0.2.4", "--out", fw},
		{"--sign-key", filepath.Join(dir, "other.key"), "--version", "0.2.5", "--out", fw},
		{"--version", "0.2.5"},
	} {
		if err := run(append([]string{"firmware", "sign-downgrade"}, bad...), &out); err == nil {
			t.Errorf("sign-downgrade %q accepted", bad)
		}
	}
	out.Reset()
	if err := run([]string{"firmware", "sign-downgrade", "--sign-key", key, "--version", "0.2.5", "--out", fw}, &out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(fw, firmware.ManifestPath))
	if err != nil {
		t.Fatal(err)
	}
	var m firmware.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	pub, err := fwsign.ReadPublicFile(filepath.Join(dir, "release.pub"))
	if err != nil {
		t.Fatal(err)
	}
	trusted := []ed25519.PublicKey{pub}
	if err := fwsign.VerifyDowngrade(trusted, "0.2.5", m.Firmware.DowngradeSignature); err != nil {
		t.Errorf("the manifest's permission: %v", err)
	}
	if err := fwsign.VerifyDowngrade(trusted, "0.2.4", m.Firmware.DowngradeSignature); err == nil {
		t.Error("the permission for 0.2.5 holds for 0.2.4")
	}
	if !strings.Contains(out.String(), m.Firmware.DowngradeSignature) {
		t.Errorf("output %q does not print the permission", out.String())
	}
	// Without --out, the permission is printed.
	out.Reset()
	if err := run([]string{"firmware", "sign-downgrade", "--sign-key", key, "--version", "0.2.4"}, &out); err != nil {
		t.Fatal(err)
	}
	if err := fwsign.VerifyDowngrade(trusted, "0.2.4", strings.TrimSpace(out.String())); err != nil {
		t.Errorf("the printed permission: %v", err)
	}
}
