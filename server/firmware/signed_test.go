package firmware

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fwsign"
)

// A repository that requires signatures does not offer an unsigned image
// and says why; a signed one is offered with its signature, which verifies
// with the release key; a manifest whose signature does not match its
// image is not offered either way; Publish refuses a signature that does
// not verify.
func TestSignedReleases(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	old := msg.FirmwareCheckRequest{NodeID: "n", CurrentVersion: "1.0.0"}

	unsigned, err := Open(publish(t, []byte("image-v1"), "1.2.0"), "")
	if err != nil {
		t.Fatal(err)
	}
	if resp := unsigned.Check(old); !resp.UpdateAvailable {
		t.Fatalf("signatures not required: unsigned image not offered: %+v", resp)
	}
	if err := unsigned.RequireSignatures(true); err != nil {
		t.Fatal(err)
	}
	if resp := unsigned.Check(old); resp.UpdateAvailable || !strings.Contains(resp.Message, "not signed") || !strings.Contains(resp.Message, "--allow-unsigned") {
		t.Errorf("signatures required: unsigned image %+v, want not offered, saying why", resp)
	}

	image := []byte("image-v2")
	rel := Release{Version: "1.3.0", ReleaseDate: "2026-11-22"}
	SignRelease(priv, image, &rel)
	dir := t.TempDir()
	if _, err := Publish(dir, roles, image, rel); err != nil {
		t.Fatal(err)
	}
	signed, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := signed.RequireSignatures(true); err != nil {
		t.Fatal(err)
	}
	resp := signed.Check(old)
	if !resp.UpdateAvailable {
		t.Fatalf("signed image not offered: %+v", resp)
	}
	if err := fwsign.Verify([]ed25519.PublicKey{pub}, resp.Version, resp.ChecksumSHA256, resp.SizeBytes, resp.Signature); err != nil {
		t.Errorf("the offer's signature: %v", err)
	}

	// The manifest edited to another image: the signature no longer holds.
	other := []byte("image-v3, forged")
	if err := os.WriteFile(filepath.Join(dir, ImagePath), other, 0o644); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(dir, ManifestPath)
	var m Manifest
	data, _ := os.ReadFile(mpath)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	s, _, _ := fileSHA256(filepath.Join(dir, ImagePath))
	m.Firmware.ChecksumSHA256, m.Firmware.SizeBytes = s, int64(len(other))
	data, _ = json.Marshal(m)
	if err := os.WriteFile(mpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, require := range []bool{true, false} {
		if err := signed.RequireSignatures(require); err != nil {
			t.Fatal(err)
		}
		if resp := signed.Check(old); resp.UpdateAvailable || !strings.Contains(resp.Message, "signature") {
			t.Errorf("require %v: image not matching its signature %+v, want not offered", require, resp)
		}
	}

	bad := Release{Version: "1.4.0", ReleaseDate: "2026-11-22"}
	SignRelease(priv, []byte("something else"), &bad)
	_, err = Publish(t.TempDir(), roles, image, bad)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "signature" {
		t.Errorf("publishing a release whose signature is for other bytes: %v, want a signature field error", err)
	}
}

// A release published with the release key's downgrade permission offers
// it to nodes with the image, so that nodes that ran a newer version take
// it when an update is forced; a permission for another version is
// refused by Publish, and one edited into the manifest is not offered.
func TestDowngradePermissionIsOffered(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	image := []byte("image-v0.2.5")
	rel := Release{Version: "0.2.5", ReleaseDate: "2026-11-22"}
	SignRelease(priv, image, &rel)
	SignDowngrade(priv, &rel)
	dir := t.TempDir()
	if _, err := Publish(dir, roles, image, rel); err != nil {
		t.Fatal(err)
	}
	repo, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	resp := repo.Check(msg.FirmwareCheckRequest{NodeID: "n", CurrentVersion: "0.3.0", Force: true})
	if !resp.UpdateAvailable {
		t.Fatalf("forced check: %+v", resp)
	}
	if err := fwsign.VerifyDowngrade([]ed25519.PublicKey{pub}, "0.2.5", resp.DowngradeSignature); err != nil {
		t.Errorf("the offer's downgrade permission: %v", err)
	}

	bad := rel
	bad.DowngradeSignature = fwsign.SignDowngrade(priv, "0.2.4")
	var fe *FieldError
	if _, err := Publish(t.TempDir(), roles, image, bad); !errors.As(err, &fe) || fe.Field != "downgrade_signature" {
		t.Errorf("publishing a permission for another version: %v, want a downgrade_signature field error", err)
	}
	mpath := filepath.Join(dir, ManifestPath)
	var m Manifest
	data, _ := os.ReadFile(mpath)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m.Firmware.DowngradeSignature = bad.DowngradeSignature
	data, _ = json.Marshal(m)
	if err := os.WriteFile(mpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := repo.Reload(); err != nil {
		t.Fatal(err)
	}
	if resp := repo.Check(msg.FirmwareCheckRequest{NodeID: "n", CurrentVersion: "0.1.0"}); resp.UpdateAvailable || !strings.Contains(resp.Message, "downgrade") {
		t.Errorf("a manifest with another version's permission: %+v, want not offered, saying why", resp)
	}
}
