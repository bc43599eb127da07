package natsbus

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/saint-os/saint/persist"
)

// CAFingerprint is the SHA-256 of a certificate's DER encoding, in hex:
// what the web UI shows for the server's CA and for the CA each node
// pinned, to be compared by eye.
func CAFingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// TrustCA returns a client TLS configuration that accepts a server whose
// certificate the CA in caPEM signed, whatever name the client dialled
// (the bus is reached by address as often as by name): for saint-server's
// own connection, the ROS 2 bridge and tools, given DATA/bus/ca.pem.
func TrustCA(caPEM []byte) (*tls.Config, error) {
	ca, err := parseCA(caPEM)
	if err != nil {
		return nil, err
	}
	return pinnedConfig(func(chain []*x509.Certificate) error { return verifyWith(chain, ca) }), nil
}

// CAPin is a node's trust in its server's CA, on first use: on its first
// contact it pins the CA the server presents (the last, self-signed
// certificate of the chain) by writing it to its file (0600), and from
// then on it accepts only servers whose certificate that CA signed.
type CAPin struct {
	file string
	log  *slog.Logger

	mu sync.Mutex
	ca *x509.Certificate
}

// PinCA reads the CA pinned in file, if there is one yet.
func PinCA(file string, log *slog.Logger) (*CAPin, error) {
	if log == nil {
		log = slog.Default()
	}
	p := &CAPin{file: file, log: log}
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		if p.ca, err = parseCA(data); err != nil {
			return nil, fmt.Errorf("natsbus: pinned CA %s: %w (delete it to pin the server's CA again)", file, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	return p, nil
}

// Fingerprint is the pinned CA's (CAFingerprint), "" before the first
// contact.
func (p *CAPin) Fingerprint() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ca == nil {
		return ""
	}
	return CAFingerprint(p.ca.Raw)
}

// TLS is the client configuration that pins and checks.
func (p *CAPin) TLS() *tls.Config { return pinnedConfig(p.verify) }

func (p *CAPin) verify(chain []*x509.Certificate) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ca != nil {
		if err := verifyWith(chain, p.ca); err != nil {
			return fmt.Errorf("server's certificate is not from the pinned CA %s (%s): %w; if the server was reinstalled, delete %s on this node", CAFingerprint(p.ca.Raw), p.file, err, p.file)
		}
		return nil
	}
	ca := chain[len(chain)-1]
	if !ca.IsCA || ca.CheckSignatureFrom(ca) != nil {
		return errors.New("server presented no self-signed CA to pin")
	}
	if err := verifyWith(chain, ca); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.file), 0o700); err != nil {
		return err
	}
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	if err := persist.WriteFile(p.file, block, 0o600); err != nil {
		return fmt.Errorf("pinning the server's CA: %w", err)
	}
	p.ca = ca
	p.log.Warn("bus: pinned the server's CA on first contact; compare its fingerprint with the server's (web UI, system status)", "ca_sha256", CAFingerprint(ca.Raw), "file", p.file)
	return nil
}

// pinnedConfig verifies the server's chain with verify instead of the
// system roots and host names.
func pinnedConfig(verify func([]*x509.Certificate) error) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is verified below, against a pinned CA rather than the
		// system's roots and a host name.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("natsbus: server sent no certificate")
			}
			chain := make([]*x509.Certificate, len(raw))
			for i, der := range raw {
				c, err := x509.ParseCertificate(der)
				if err != nil {
					return fmt.Errorf("natsbus: server certificate: %w", err)
				}
				chain[i] = c
			}
			if err := verify(chain); err != nil {
				return fmt.Errorf("natsbus: %w", err)
			}
			return nil
		},
	}
}

// verifyWith checks the chain's leaf was issued by ca for a server.
func verifyWith(chain []*x509.Certificate, ca *x509.Certificate) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

func parseCA(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("natsbus: want a PEM CERTIFICATE")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	if !c.IsCA {
		return nil, errors.New("natsbus: the certificate is not a CA")
	}
	return c, nil
}
