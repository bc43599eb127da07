package fwsign_test

import (
	"crypto/ed25519"
	"testing"

	"github.com/saint-os/saint/fwsign"
)

// No key text makes ParsePublic panic, and no signature text verifies a
// release the key did not sign.
func FuzzParseAndVerify(f *testing.F) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		f.Fatal(err)
	}
	const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	f.Add(fwsign.EncodePublic(pub), fwsign.Sign(priv, "1.0.0", sum, 1), "1.0.1")
	f.Add("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n", "", "1.0.0")
	f.Add("ed25519:", "AAAA", "")
	f.Fuzz(func(t *testing.T, key, sig, version string) {
		_, _ = fwsign.ParsePublic(key)
		if version == "1.0.0" {
			return // the one release the key signed
		}
		if err := fwsign.Verify([]ed25519.PublicKey{pub}, version, sum, 1, sig); err == nil {
			t.Fatalf("signature %q verified release %q the key never signed", sig, version)
		}
	})
}
