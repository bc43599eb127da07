package sros2

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Validity is how long certificates and permissions are valid, as sros2
// makes them (ten years; a day back so that a peer whose clock is a
// little behind does not see them as not yet valid).
const Validity = 10 * 365 * 24 * time.Hour

// caName is the subject of a keystore's CA.
const caName = "saint_os keystore CA"

// Files of a keystore and of its enclaves.
const (
	CACertFile            = "public/ca.cert.pem"
	CAKeyFile             = "private/ca.key.pem"
	GovernanceFile        = "enclaves/governance.xml"
	SignedGovernanceFile  = "enclaves/governance.p7s"
	CertFile              = "cert.pem"
	KeyFile               = "key.pem"
	IdentityCAFile        = "identity_ca.cert.pem"
	PermissionsCAFile     = "permissions_ca.cert.pem"
	EnclaveGovernanceFile = "governance.p7s"
	PermissionsFile       = "permissions.xml"
	SignedPermissionsFile = "permissions.p7s"
)

// Keystore is a keystore directory with its CA loaded.
type Keystore struct {
	Dir    string
	CACert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	now    func() time.Time
}

// Create makes a new keystore in dir (which must not hold one): a CA,
// and the governance every enclave of it shares, signed by the CA.
func Create(dir string) (*Keystore, error) {
	if _, err := os.Stat(filepath.Join(dir, CACertFile)); err == nil {
		return nil, fmt.Errorf("sros2: %s already holds a keystore (%s)", dir, CACertFile)
	}
	for _, d := range []string{"public", "private", "enclaves"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(filepath.Join(dir, "private"), 0o700); err != nil {
		return nil, err
	}
	now := time.Now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(caName, now)
	if err != nil {
		return nil, err
	}
	tmpl.IsCA, tmpl.MaxPathLen = true, 1
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	k := &Keystore{Dir: dir, CACert: cert, caKey: key, now: time.Now}
	if err := writeKey(filepath.Join(dir, CAKeyFile), key); err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for _, f := range []string{CACertFile, "public/identity_ca.cert.pem", "public/permissions_ca.cert.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), certPEM, 0o644); err != nil {
			return nil, err
		}
	}
	gov := Governance()
	if err := os.WriteFile(filepath.Join(dir, GovernanceFile), gov, 0o644); err != nil {
		return nil, err
	}
	signed, err := SignSMIME(cert, key, gov, now)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, SignedGovernanceFile), signed, 0o644); err != nil {
		return nil, err
	}
	return k, nil
}

// Open loads the keystore in dir, with its CA's key.
func Open(dir string) (*Keystore, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, fmt.Errorf("sros2: %s is not a keystore: %w", dir, err)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("sros2: %s: %w", CACertFile, err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if err != nil {
		return nil, fmt.Errorf("sros2: the keystore's CA key: %w", err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("sros2: %s: %w", CAKeyFile, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("sros2: %s is not the key of %s", CAKeyFile, CACertFile)
	}
	return &Keystore{Dir: dir, CACert: cert, caKey: key, now: time.Now}, nil
}

// CheckEnclaveName checks an enclave's name: an absolute ROS name
// ("/saint_bridge", "/workstations/lab1") of letters, digits and _.
func CheckEnclaveName(name string) error {
	if !strings.HasPrefix(name, "/") || name == "/" || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		return fmt.Errorf("sros2: enclave %q: want an absolute name such as /saint_bridge", name)
	}
	for _, r := range name {
		if !(r == '/' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("sros2: enclave %q: %q is not allowed (letters, digits, _ and /)", name, r)
		}
	}
	return nil
}

// EnclaveDir is the directory of the enclave name in the keystore dir.
func EnclaveDir(dir, name string) string {
	return filepath.Join(dir, "enclaves", filepath.FromSlash(strings.TrimPrefix(name, "/")))
}

// CreateEnclave makes (or remakes, with a new key) the enclave name: an
// identity certificate CN=name signed by the CA, and permissions for p
// signed by the CA. It returns the enclave's directory.
func (k *Keystore) CreateEnclave(name string, p Policy) (string, error) {
	if err := CheckEnclaveName(name); err != nil {
		return "", err
	}
	dir := EnclaveDir(k.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	now := k.now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl, err := template(name, now)
	if err != nil {
		return "", err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyAgreement
	der, err := x509.CreateCertificate(rand.Reader, tmpl, k.CACert, &key.PublicKey, k.caKey)
	if err != nil {
		return "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return "", err
	}
	perms, err := Permissions(name, p, cert.NotBefore, cert.NotAfter)
	if err != nil {
		return "", err
	}
	signedPerms, err := SignSMIME(k.CACert, k.caKey, perms, now)
	if err != nil {
		return "", err
	}
	gov, err := os.ReadFile(filepath.Join(k.Dir, SignedGovernanceFile))
	if err != nil {
		return "", fmt.Errorf("sros2: the keystore's governance: %w", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.CACert.Raw})
	if err := writeKey(filepath.Join(dir, KeyFile), key); err != nil {
		return "", err
	}
	for f, data := range map[string][]byte{
		CertFile:              pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		IdentityCAFile:        caPEM,
		PermissionsCAFile:     caPEM,
		EnclaveGovernanceFile: gov,
		PermissionsFile:       perms,
		SignedPermissionsFile: signedPerms,
	} {
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func template(cn string, now time.Time) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 159))
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-24 * time.Hour).Truncate(time.Second),
		NotAfter:              now.Add(Validity).Truncate(time.Second),
		BasicConstraintsValid: true,
	}, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func parseCert(data []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("want a PEM CERTIFICATE")
	}
	return x509.ParseCertificate(b.Bytes)
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, errors.New("want a PEM PRIVATE KEY (PKCS #8)")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("want an ECDSA key, have %T", k)
	}
	return ec, nil
}

// Enclave is the paths of an enclave's files, as DDS Security's
// properties name them.
type Enclave struct {
	Dir                                    string
	IdentityCA, Cert, Key                  string
	PermissionsCA, Governance, Permissions string
}

// OpenEnclave finds an enclave: dir is either the enclave's directory
// (holding cert.pem) or a keystore, whose enclave name is used. Every
// file must be there.
func OpenEnclave(dir, name string) (Enclave, error) {
	if _, err := os.Stat(filepath.Join(dir, CertFile)); err != nil {
		if _, kerr := os.Stat(filepath.Join(dir, "enclaves")); kerr != nil {
			return Enclave{}, fmt.Errorf("sros2: %s is neither an enclave (no %s) nor a keystore (no enclaves/)", dir, CertFile)
		}
		if err := CheckEnclaveName(name); err != nil {
			return Enclave{}, err
		}
		dir = EnclaveDir(dir, name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Enclave{}, err
	}
	e := Enclave{Dir: abs,
		IdentityCA: filepath.Join(abs, IdentityCAFile), Cert: filepath.Join(abs, CertFile), Key: filepath.Join(abs, KeyFile),
		PermissionsCA: filepath.Join(abs, PermissionsCAFile), Governance: filepath.Join(abs, EnclaveGovernanceFile),
		Permissions: filepath.Join(abs, SignedPermissionsFile)}
	for _, f := range []string{e.IdentityCA, e.Cert, e.Key, e.PermissionsCA, e.Governance, e.Permissions} {
		if _, err := os.Stat(f); err != nil {
			return Enclave{}, fmt.Errorf("sros2: enclave %s: %w", abs, err)
		}
	}
	// The commonest mistake, an identity from another keystore, said
	// here rather than as a DDS handshake that never completes.
	ca, err := readCert(e.IdentityCA)
	if err != nil {
		return Enclave{}, err
	}
	cert, err := readCert(e.Cert)
	if err != nil {
		return Enclave{}, err
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return Enclave{}, fmt.Errorf("sros2: enclave %s: %s is not signed by %s: %w", abs, CertFile, IdentityCAFile, err)
	}
	return e, nil
}

func readCert(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parseCert(data)
	if err != nil {
		return nil, fmt.Errorf("sros2: %s: %w", path, err)
	}
	return c, nil
}
