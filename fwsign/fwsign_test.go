package fwsign_test

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/saint-os/saint/fwsign"
)

const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestSignVerifyAndKeyFiles(t *testing.T) {
	dir := t.TempDir()
	pub, err := fwsign.WriteKeyPair(dir, "release")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "release.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("release.key: %v, mode %v; want 0600", err, st.Mode())
	}
	if _, err := fwsign.WriteKeyPair(dir, "release"); err == nil {
		t.Error("WriteKeyPair overwrote an existing release key")
	}
	priv, err := fwsign.ReadPrivateFile(filepath.Join(dir, "release.key"))
	if err != nil {
		t.Fatal(err)
	}
	filePub, err := fwsign.ReadPublicFile(filepath.Join(dir, "release.pub"))
	if err != nil || !filePub.Equal(pub) {
		t.Fatalf("release.pub: %v, %v", filePub, err)
	}
	compact, err := fwsign.ParsePublic(fwsign.EncodePublic(pub))
	if err != nil || !compact.Equal(pub) {
		t.Fatalf("compact form: %v, %v", compact, err)
	}
	sig := fwsign.Sign(priv, "1.3.0", sum, 1234)
	trusted := []ed25519.PublicKey{pub}
	if err := fwsign.Verify(trusted, "1.3.0", sum, 1234, sig); err != nil {
		t.Fatalf("a valid signature: %v", err)
	}
	other, _, _ := ed25519.GenerateKey(nil)
	for _, c := range []struct {
		name    string
		trusted []ed25519.PublicKey
		version string
		sum     string
		size    int64
		sig     string
		want    error
	}{
		{"unsigned", trusted, "1.3.0", sum, 1234, "", fwsign.ErrUnsigned},
		{"another version", trusted, "1.3.1", sum, 1234, sig, fwsign.ErrBadSignature},
		{"another image", trusted, "1.3.0", "0" + sum[1:], 1234, sig, fwsign.ErrBadSignature},
		{"another size", trusted, "1.3.0", sum, 1235, sig, fwsign.ErrBadSignature},
		{"untrusted key", []ed25519.PublicKey{other}, "1.3.0", sum, 1234, sig, fwsign.ErrBadSignature},
		{"garbage", trusted, "1.3.0", sum, 1234, "!!", fwsign.ErrBadSignature},
		{"no key", nil, "1.3.0", sum, 1234, sig, fwsign.ErrNoTrustedKey},
	} {
		if err := fwsign.Verify(c.trusted, c.version, c.sum, c.size, c.sig); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	for _, bad := range []string{"", "ed25519:AAAA", "rsa:abc", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"} {
		if _, err := fwsign.ParsePublic(bad); err == nil {
			t.Errorf("ParsePublic(%q) accepted", bad)
		}
	}
}
