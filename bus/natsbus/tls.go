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
	"strings"
	"sync"
	"time"

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

// CAPin is a node's trust in its server's CA. A node enrolled before its
// first boot (flash_node.sh, saintctl nodes enrol) holds the fingerprint of
// its server's CA and accepts only a server whose chain ends in that CA.
// Otherwise it trusts the CA pinned in its file (0600); with neither, it
// pins the CA of the first server that answers only when told to
// (CAPinOptions.TrustFirst, for a lab), and refuses every server else.
// Each refusal is logged on the node: the first at once, then one a
// minute with the count.
type CAPin struct {
	o CAPinOptions

	mu sync.Mutex
	ca *x509.Certificate
	// refusals since the last one logged, and when that was.
	refused    int
	refusedLog time.Time
}

// CAPinOptions configures OpenCAPin.
type CAPinOptions struct {
	// File is where the server's CA is pinned (the node's bus-ca.pem).
	File string
	// Enrolled is the fingerprint (CAFingerprint) of the CA the node was
	// enrolled with, "" for a node that was not: only a server whose chain
	// ends in that CA is accepted, whatever File holds.
	Enrolled string
	// TrustFirst lets a node that is neither enrolled nor pinned pin the CA
	// of the first server that answers (trust on first use): for a lab,
	// where whoever answers first is the server.
	TrustFirst bool
	Log        *slog.Logger
	// Now is the wall clock for the refusal log's pacing; nil is time.Now.
	Now func() time.Time
}

// refusalLogEvery paces the log of refused servers: a node retries every
// few seconds, and the first refusal says all there is to say.
const refusalLogEvery = time.Minute

// OpenCAPin reads the CA pinned in o.File, if there is one yet, and checks
// o.Enrolled is a fingerprint.
func OpenCAPin(o CAPinOptions) (*CAPin, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Enrolled != "" {
		fp, err := ParseCAFingerprint(o.Enrolled)
		if err != nil {
			return nil, fmt.Errorf("natsbus: enrolled CA: %w", err)
		}
		o.Enrolled = fp
	}
	p := &CAPin{o: o}
	data, err := os.ReadFile(o.File)
	switch {
	case err == nil:
		ca, err := parseCA(data)
		if err != nil {
			if o.Enrolled == "" {
				return nil, fmt.Errorf("natsbus: pinned CA %s: %w (delete it to pin the server's CA again)", o.File, err)
			}
			// The enrolment is the trust; the file is only its copy, and
			// is written again at the next contact.
			o.Log.Warn("bus: pinned CA file unreadable; the enrolled fingerprint decides", "file", o.File, "err", err)
		} else if o.Enrolled != "" && CAFingerprint(ca.Raw) != o.Enrolled {
			o.Log.Warn("bus: the CA pinned in the file is not the one this node was enrolled with; the enrolment decides",
				"file", o.File, "pinned_sha256", CAFingerprint(ca.Raw), "enrolled_sha256", o.Enrolled)
		} else {
			p.ca = ca
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	return p, nil
}

// ParseCAFingerprint checks s is a CA fingerprint (64 hex digits, spaces
// and colons between pairs allowed, as tools print it) and returns it in
// CAFingerprint's form.
func ParseCAFingerprint(s string) (string, error) {
	fp := strings.ToLower(strings.NewReplacer(":", "", " ", "").Replace(strings.TrimSpace(s)))
	if len(fp) != 2*sha256.Size {
		return "", fmt.Errorf("fingerprint %q: want the CA's SHA-256, %d hex digits", s, 2*sha256.Size)
	}
	if _, err := hex.DecodeString(fp); err != nil {
		return "", fmt.Errorf("fingerprint %q: want the CA's SHA-256, %d hex digits", s, 2*sha256.Size)
	}
	return fp, nil
}

// Fingerprint is the fingerprint of the CA the node trusts: the enrolled
// one, else the pinned one; "" before the first contact.
func (p *CAPin) Fingerprint() string {
	if p.o.Enrolled != "" {
		return p.o.Enrolled
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ca == nil {
		return ""
	}
	return CAFingerprint(p.ca.Raw)
}

// Mode says how the node trusts its server's CA, for its boot log:
// "enrolled", "pinned", "trust-first-server" or "none".
func (p *CAPin) Mode() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.o.Enrolled != "":
		return "enrolled"
	case p.ca != nil:
		return "pinned"
	case p.o.TrustFirst:
		return "trust-first-server"
	}
	return "none"
}

// TLS is the client configuration that pins and checks.
func (p *CAPin) TLS() *tls.Config { return pinnedConfig(p.verify) }

func (p *CAPin) verify(chain []*x509.Certificate) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.check(chain)
	if err != nil {
		p.logRefusal(chain, err)
	}
	return err
}

// check accepts or refuses the chain a server presented; p.mu is held.
func (p *CAPin) check(chain []*x509.Certificate) error {
	presented := chain[len(chain)-1]
	switch {
	case p.o.Enrolled != "":
		if CAFingerprint(presented.Raw) != p.o.Enrolled {
			return fmt.Errorf("%w: the server's CA is %s, this node was enrolled with %s", ErrWrongCA, CAFingerprint(presented.Raw), p.o.Enrolled)
		}
		if err := verifyWith(chain, presented); err != nil {
			return fmt.Errorf("%w: the server's certificate is not from the enrolled CA %s: %v", ErrWrongCA, p.o.Enrolled, err)
		}
		if p.ca == nil || !p.ca.Equal(presented) {
			// A copy of the CA beside the enrolment, for tools and for
			// Fingerprint; the enrolment is what is checked.
			if err := p.save(presented); err != nil {
				p.o.Log.Warn("bus: enrolled CA not copied to its file", "file", p.o.File, "err", err)
			} else {
				p.ca = presented
			}
		}
		return nil
	case p.ca != nil:
		if err := verifyWith(chain, p.ca); err != nil {
			return fmt.Errorf("%w: the server's certificate is not from the pinned CA %s (%s): %v; if the server was reinstalled, enrol this node again (flash_node.sh) or delete %s", ErrWrongCA, CAFingerprint(p.ca.Raw), p.o.File, err, p.o.File)
		}
		return nil
	case !p.o.TrustFirst:
		return fmt.Errorf("%w: this node was not enrolled with its server's CA (no fingerprint) and has pinned none; enrol it (flash_node.sh, saintctl nodes enrol) or, in a lab, start it with --trust-first-server", ErrWrongCA)
	}
	if !presented.IsCA || presented.CheckSignatureFrom(presented) != nil {
		return errors.New("server presented no self-signed CA to pin")
	}
	if err := verifyWith(chain, presented); err != nil {
		return err
	}
	if err := p.save(presented); err != nil {
		return fmt.Errorf("pinning the server's CA: %w", err)
	}
	p.ca = presented
	p.o.Log.Warn("bus: --trust-first-server: pinned the CA of the first server that answered; compare its fingerprint with the server's (web UI, system status)", "ca_sha256", CAFingerprint(presented.Raw), "file", p.o.File)
	return nil
}

// ErrWrongCA is a server refused for its CA.
var ErrWrongCA = errors.New("server refused: not the expected CA")

// save writes ca to the pin file; p.mu is held.
func (p *CAPin) save(ca *x509.Certificate) error {
	if err := os.MkdirAll(filepath.Dir(p.o.File), 0o700); err != nil {
		return err
	}
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	return persist.WriteFile(p.o.File, block, 0o600)
}

// logRefusal logs a refused server: the first at once, later ones once a
// refusalLogEvery with their count; p.mu is held.
func (p *CAPin) logRefusal(chain []*x509.Certificate, err error) {
	p.refused++
	now := p.o.Now()
	if !p.refusedLog.IsZero() && now.Sub(p.refusedLog) < refusalLogEvery {
		return
	}
	p.o.Log.Error("bus: server refused: its TLS CA is not the one this node trusts; not connecting",
		"server_ca_sha256", CAFingerprint(chain[len(chain)-1].Raw), "trusted", p.trustedLocked(), "refusals", p.refused, "err", err)
	p.refused, p.refusedLog = 0, now
}

// trustedLocked describes the CA the node trusts; p.mu is held.
func (p *CAPin) trustedLocked() string {
	switch {
	case p.o.Enrolled != "":
		return "enrolled " + p.o.Enrolled
	case p.ca != nil:
		return "pinned " + CAFingerprint(p.ca.Raw)
	}
	return "none (not enrolled, no --trust-first-server)"
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

// Files of a node's bus identity in its state directory: its nkey seed,
// the fingerprint of the server's CA it was enrolled with, and the CA
// itself once the node has met its server.
const (
	NodeKeyFile        = "bus.nk"
	NodeEnrolledCAFile = "bus-ca.sha256"
	NodeCAFile         = "bus-ca.pem"
)

// ReadCAFingerprintFile reads an enrolled CA fingerprint (NodeEnrolledCAFile);
// a missing file is "" (a node that was not enrolled).
func ReadCAFingerprintFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("natsbus: %w", err)
	}
	fp, err := ParseCAFingerprint(string(data))
	if err != nil {
		return "", fmt.Errorf("natsbus: %s: %w", path, err)
	}
	return fp, nil
}

// WriteCAFingerprintFile writes fingerprint to path atomically (0644): a
// node's enrolment with its server's CA.
func WriteCAFingerprintFile(path, fingerprint string) error {
	fp, err := ParseCAFingerprint(fingerprint)
	if err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	return persist.WriteFile(path, []byte(fp+"\n"), 0o644)
}
