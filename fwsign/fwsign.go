package fwsign

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Errors Verify wraps.
var (
	// ErrUnsigned is an offer without a signature.
	ErrUnsigned = errors.New("firmware is not signed")
	// ErrBadSignature is a signature no trusted key made over this offer.
	ErrBadSignature = errors.New("firmware signature does not verify with a trusted release key")
	// ErrNoTrustedKey is a verifier without any key.
	ErrNoTrustedKey = errors.New("no trusted firmware release key")
)

// publicPrefix starts the compact form of a public key.
const publicPrefix = "ed25519:"

// Message is what a release key signs: a domain string, so that the
// signature means nothing anywhere else, then the version, the image's
// sha256 (lower-case hex) and its size, one a line.
func Message(version, sha256hex string, size int64) []byte {
	return []byte("saint-firmware-v1\n" + version + "\n" + strings.ToLower(sha256hex) + "\n" + strconv.FormatInt(size, 10) + "\n")
}

// Sign signs a release with key and returns the signature in base64.
func Sign(key ed25519.PrivateKey, version, sha256hex string, size int64) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, Message(version, sha256hex, size)))
}

// Verify checks signature (base64) over a release against the trusted
// keys: nil when one of them made it.
func Verify(trusted []ed25519.PublicKey, version, sha256hex string, size int64, signature string) error {
	if len(trusted) == 0 {
		return ErrNoTrustedKey
	}
	if signature == "" {
		return ErrUnsigned
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is not %d bytes of base64", ErrBadSignature, ed25519.SignatureSize)
	}
	m := Message(version, sha256hex, size)
	for _, k := range trusted {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, m, sig) {
			return nil
		}
	}
	return ErrBadSignature
}

// EncodePublic is the compact form of a public key: "ed25519:" and its
// bytes in base64.
func EncodePublic(k ed25519.PublicKey) string {
	return publicPrefix + base64.StdEncoding.EncodeToString(k)
}

// ParsePublic reads a public key in its compact form or as PEM.
func ParsePublic(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	if b, _ := pem.Decode([]byte(s)); b != nil {
		if b.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("fwsign: PEM block %q, want PUBLIC KEY", b.Type)
		}
		k, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("fwsign: public key: %w", err)
		}
		ek, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("fwsign: public key is %T, want Ed25519", k)
		}
		return ek, nil
	}
	raw, ok := strings.CutPrefix(s, publicPrefix)
	if !ok {
		return nil, fmt.Errorf("fwsign: public key %q: want %q and base64, or PEM", short(s), publicPrefix)
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("fwsign: public key %q: want %d bytes of base64", short(s), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// ReadPublicFile reads a public key file (either form).
func ReadPublicFile(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublic(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ReadPrivateFile reads a private key written by WriteKeyPair.
func ReadPrivateFile(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM PRIVATE KEY", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: key is %T, want Ed25519", path, k)
	}
	return ek, nil
}

// WriteKeyPair makes a new release key and writes it as name.key (the
// private key, mode 0600, never overwritten) and name.pub in dir. It
// returns the public key.
func WriteKeyPair(dir, name string) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	p8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pkix, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, name+".key")
	f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fwsign: %w (a release key is never overwritten)", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: p8}); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})
	if err := os.WriteFile(filepath.Join(dir, name+".pub"), pubPEM, 0o644); err != nil {
		return nil, err
	}
	return pub, nil
}

func short(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}
