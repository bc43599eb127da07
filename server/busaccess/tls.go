package busaccess

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/persist"
)

// Files of the bus's TLS, in the Authority's directory.
const (
	CAFile        = "ca.pem"         // the CA certificate: nodes pin it, tools trust it
	caKeyFile     = "ca-key.pem"     // its private key (0600)
	certFile      = "server.pem"     // the broker's certificate and the CA's
	certKeyFile   = "server-key.pem" // its private key (0600)
	caValidity    = 20 * 365 * 24 * time.Hour
	certValidity  = 2 * 365 * 24 * time.Hour
	certRenewLeft = 30 * 24 * time.Hour
)

// ServerTLS returns the broker's TLS configuration: a certificate for
// hosts (the addresses and names nodes reach the broker by; loopback and
// localhost are always added) issued by the Authority's CA. The CA is made
// at the first call and kept; the certificate is kept too, and made anew
// when it does not name every host or is about to expire.
func (a *Authority) ServerTLS(hosts ...string) (*tls.Config, error) {
	ca, caKey, err := a.loadOrCreateCA()
	if err != nil {
		return nil, fmt.Errorf("busaccess: CA: %w", err)
	}
	hosts = append(hosts, "127.0.0.1", "::1", "localhost")
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h, h+".local")
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(a.o.Dir, certFile), filepath.Join(a.o.Dir, certKeyFile))
	if err != nil || !covers(cert, ca, hosts, a.o.Now()) {
		if cert, err = a.issue(ca, caKey, hosts); err != nil {
			return nil, fmt.Errorf("busaccess: server certificate: %w", err)
		}
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
}

// CAPEM is the CA certificate, PEM encoded (nil before ServerTLS made it).
func (a *Authority) CAPEM() []byte {
	data, err := os.ReadFile(filepath.Join(a.o.Dir, CAFile))
	if err != nil {
		return nil
	}
	return data
}

// CAFingerprint is the SHA-256 of the CA certificate, in hex, or "" before
// ServerTLS made it: the value the nodes pin.
func (a *Authority) CAFingerprint() string {
	block, _ := pem.Decode(a.CAPEM())
	if block == nil {
		return ""
	}
	return natsbus.CAFingerprint(block.Bytes)
}

func (a *Authority) loadOrCreateCA() (*x509.Certificate, crypto.Signer, error) {
	certPath, keyPath := filepath.Join(a.o.Dir, CAFile), filepath.Join(a.o.Dir, caKeyFile)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err == nil {
		ca, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return nil, nil, err
		}
		key, ok := pair.PrivateKey.(crypto.Signer)
		if !ok || !ca.IsCA {
			return nil, nil, fmt.Errorf("%s is not a CA", certPath)
		}
		return ca, key, nil
	}
	if _, serr := os.Stat(certPath); !errors.Is(serr, os.ErrNotExist) {
		// Never replace a CA the nodes pinned without being told to.
		return nil, nil, fmt.Errorf("%w (nodes pin this CA: repair the files, or delete both %s and %s to make a new CA and re-pin every node)", err, CAFile, caKeyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := a.o.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"SAINT.OS"}, CommonName: "SAINT.OS bus CA " + now.UTC().Format("2006-01-02")},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, err
	}
	if err := persist.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	a.log.Info("bus: made a TLS CA; nodes pin it on first contact", "file", certPath, "ca_sha256", natsbus.CAFingerprint(der))
	return ca, key, nil
}

// issue makes and keeps a server certificate for hosts; its chain carries
// the CA, for the nodes to pin.
func (a *Authority) issue(ca *x509.Certificate, caKey crypto.Signer, hosts []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := a.o.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"SAINT.OS"}, CommonName: "saint-server bus"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	if err := writeKey(filepath.Join(a.o.Dir, certKeyFile), key); err != nil {
		return tls.Certificate{}, err
	}
	if err := persist.WriteFile(filepath.Join(a.o.Dir, certFile), chain, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(filepath.Join(a.o.Dir, certFile), filepath.Join(a.o.Dir, certKeyFile))
}

// covers reports whether cert is ca's, names every host and is not about
// to expire at now.
func covers(cert tls.Certificate, ca *x509.Certificate, hosts []string, now time.Time) bool {
	if len(cert.Certificate) < 2 {
		return false
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || leaf.CheckSignatureFrom(ca) != nil || leaf.NotAfter.Sub(now) < certRenewLeft {
		return false
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
				return false
			}
		} else if h != "" && !slices.Contains(leaf.DNSNames, h) {
			return false
		}
	}
	return true
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return persist.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
