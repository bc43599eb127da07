package fwsign

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrDowngrade is an offer older than the newest firmware a node has
// installed, without a valid downgrade permission for its version.
var ErrDowngrade = errors.New("downgrade not permitted")

// DowngradeMessage is what a release key signs to let nodes go back to
// version: a domain string of its own, so that neither a release
// signature nor anything else stands for a downgrade permission, and the
// version.
func DowngradeMessage(version string) []byte {
	return []byte("saint-firmware-downgrade-v1\n" + version + "\n")
}

// SignDowngrade signs a downgrade permission for version with key, in
// base64: nodes that have installed a newer version accept a release of
// version signed by a trusted key when its offer carries this.
func SignDowngrade(key ed25519.PrivateKey, version string) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, DowngradeMessage(version)))
}

// VerifyDowngrade checks permission (base64) lets nodes go back to
// version: nil when a trusted key signed it.
func VerifyDowngrade(trusted []ed25519.PublicKey, version, permission string) error {
	if len(trusted) == 0 {
		return fmt.Errorf("%w: no trusted release key to check a downgrade permission with", ErrDowngrade)
	}
	if permission == "" {
		return fmt.Errorf("%w: the offer carries no downgrade permission for %s (saintctl firmware sign-downgrade)", ErrDowngrade, version)
	}
	sig, err := base64.StdEncoding.DecodeString(permission)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: the downgrade permission is not %d bytes of base64", ErrDowngrade, ed25519.SignatureSize)
	}
	m := DowngradeMessage(version)
	for _, k := range trusted {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, m, sig) {
			return nil
		}
	}
	return fmt.Errorf("%w: the downgrade permission for %s was not signed by a trusted release key", ErrDowngrade, version)
}

// CompareVersions compares dotted versions numerically ("1.10.0" > "1.9.2";
// a leading "v" is ignored; missing parts count as 0; non-numeric parts
// compare as strings). It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y string
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.Atoi(orZero(x))
		ny, ey := strconv.Atoi(orZero(y))
		if ex == nil && ey == nil {
			if nx != ny {
				if nx < ny {
					return -1
				}
				return 1
			}
			continue
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
