package fwsign_test

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/saint-os/saint/fwsign"
)

// A downgrade permission verifies only for the version it names, with the
// key that signed it; a release signature is not one, nor is anything
// without a trusted key.
func TestDowngradePermission(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	trusted := []ed25519.PublicKey{other, pub}
	perm := fwsign.SignDowngrade(priv, "0.2.5")
	if err := fwsign.VerifyDowngrade(trusted, "0.2.5", perm); err != nil {
		t.Fatalf("a good permission: %v", err)
	}
	for _, c := range []struct {
		name    string
		keys    []ed25519.PublicKey
		version string
		perm    string
	}{
		{"another version", trusted, "0.2.4", perm},
		{"another key", []ed25519.PublicKey{other}, "0.2.5", perm},
		{"no key", nil, "0.2.5", perm},
		{"none", trusted, "0.2.5", ""},
		{"not base64", trusted, "0.2.5", "!!"},
		{"a release signature", trusted, "0.2.5", fwsign.Sign(priv, "0.2.5", sum, 10)},
	} {
		if err := fwsign.VerifyDowngrade(c.keys, c.version, c.perm); !errors.Is(err, fwsign.ErrDowngrade) {
			t.Errorf("%s: %v, want ErrDowngrade", c.name, err)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"0.3.0", "0.2.5", 1}, {"0.2.5", "0.3.0", -1}, {"1.10.0", "1.9.2", 1}, {"v1.2", "1.2.0", 0}, {"", "0.0.0", 0},
	} {
		if got := fwsign.CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
