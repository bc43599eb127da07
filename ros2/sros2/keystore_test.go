package sros2

import (
	"bytes"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// opensslVerify checks a .p7s with the OpenSSL command line, as the DDS
// Security plugins (which use OpenSSL's SMIME_read_PKCS7 and
// PKCS7_verify with PKCS7_TEXT) read it, and returns the document it
// holds.
func opensslVerify(t *testing.T, p7s, ca string) ([]byte, error) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	cmd := exec.Command("openssl", "smime", "-verify", "-text", "-in", p7s, "-CAfile", ca)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, &verifyError{err, stderr.String()}
	}
	return out, nil
}

type verifyError struct {
	err    error
	stderr string
}

func (e *verifyError) Error() string { return e.err.Error() + ": " + e.stderr }

func TestKeystoreSignaturesVerifyWithOpenSSL(t *testing.T) {
	dir := t.TempDir()
	k, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := k.CreateEnclave("/saint_bridge", Policy{})
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, CACertFile)
	for _, c := range []struct{ p7s, xml string }{
		{filepath.Join(dir, SignedGovernanceFile), filepath.Join(dir, GovernanceFile)},
		{filepath.Join(enc, EnclaveGovernanceFile), filepath.Join(dir, GovernanceFile)},
		{filepath.Join(enc, SignedPermissionsFile), filepath.Join(enc, PermissionsFile)},
	} {
		got, err := opensslVerify(t, c.p7s, ca)
		if err != nil {
			t.Fatalf("%s: %v", c.p7s, err)
		}
		want, _ := os.ReadFile(c.xml)
		if !bytes.Equal(bytes.ReplaceAll(got, []byte("\r\n"), []byte("\n")), want) {
			t.Errorf("%s holds\n%s\nwant %s", c.p7s, got, want)
		}
	}

	// The signature covers the document: one changed byte and OpenSSL
	// refuses it.
	data, _ := os.ReadFile(filepath.Join(enc, SignedPermissionsFile))
	tampered := filepath.Join(t.TempDir(), "tampered.p7s")
	if err := os.WriteFile(tampered, bytes.Replace(data, []byte("<topic>*</topic>"), []byte("<topic>X</topic>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := opensslVerify(t, tampered, ca); err == nil {
		t.Error("a tampered permissions.p7s verifies")
	}
	// Another keystore's CA does not vouch for it.
	other, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opensslVerify(t, filepath.Join(enc, SignedPermissionsFile), filepath.Join(other.Dir, CACertFile)); err == nil {
		t.Error("permissions.p7s verifies against another keystore's CA")
	}
}

func TestEnclaveIdentity(t *testing.T) {
	dir := t.TempDir()
	k, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir); err == nil {
		t.Error("a second keystore was created over the first")
	}
	if _, err := k.CreateEnclave("/workstations/lab1", Policy{}); err != nil {
		t.Fatal(err)
	}
	k2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !k2.CACert.Equal(k.CACert) {
		t.Error("Open loaded another CA")
	}
	e, err := OpenEnclave(dir, "/workstations/lab1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := readCert(e.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.String() != "CN=/workstations/lab1" {
		t.Errorf("subject %s, want CN=/workstations/lab1", cert.Subject)
	}
	pool := x509.NewCertPool()
	pool.AddCert(k.CACert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Errorf("the enclave's certificate does not chain to the keystore CA: %v", err)
	}
	key, err := os.ReadFile(e.Key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := parseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if !pk.PublicKey.Equal(cert.PublicKey) {
		t.Error("key.pem is not cert.pem's key")
	}
	if st, _ := os.Stat(e.Key); st.Mode().Perm() != 0o600 {
		t.Errorf("key.pem mode %v, want 0600", st.Mode().Perm())
	}
	if e2, err := OpenEnclave(e.Dir, ""); err != nil || e2 != e {
		t.Errorf("opening the enclave by its directory: %+v %v", e2, err)
	}

	// An identity from another keystore is said at once.
	other, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	od, err := other.CreateEnclave("/workstations/lab1", Policy{})
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile(filepath.Join(dir, CACertFile))
	if err := os.WriteFile(filepath.Join(od, IdentityCAFile), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEnclave(od, ""); err == nil || !strings.Contains(err.Error(), "not signed by") {
		t.Errorf("an identity from another keystore: %v", err)
	}
	for _, bad := range []string{"saint_bridge", "/", "/a/", "/a b", "/a//b"} {
		if _, err := k.CreateEnclave(bad, Policy{}); err == nil {
			t.Errorf("enclave %q was created", bad)
		}
	}
}

func TestPermissionsMangleROSNames(t *testing.T) {
	k, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Publish: []string{"/saint/tracks/estop"}, Subscribe: nil, Call: []string{"/saint/nodes/adopt"}, Serve: []string{}}
	data, err := Permissions("/viewer", p, k.CACert.NotBefore, k.CACert.NotAfter)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	publish := doc[strings.Index(doc, "<publish>"):strings.Index(doc, "</publish>")]
	subscribe := doc[strings.Index(doc, "<subscribe>"):strings.Index(doc, "</subscribe>")]
	// What every ROS 2 node needs comes too.
	for _, w := range []string{"<topic>rt/saint/tracks/estop</topic>", "<topic>rq/saint/nodes/adoptRequest</topic>", "<topic>ros_discovery_info</topic>",
		"<topic>rt/rosout</topic>", "<topic>rr/*/set_parametersReply</topic>"} {
		if !strings.Contains(publish, w) {
			t.Errorf("publish lacks %s:\n%s", w, publish)
		}
	}
	for _, w := range []string{"<topic>rt/*</topic>", "<topic>rr/saint/nodes/adoptReply</topic>", "<topic>ros_discovery_info</topic>",
		"<topic>rt/parameter_events</topic>", "<topic>rq/*/get_parametersRequest</topic>"} {
		if !strings.Contains(subscribe, w) {
			t.Errorf("subscribe lacks %s:\n%s", w, subscribe)
		}
	}
	if strings.Contains(publish, "cmd_vel") || strings.Contains(publish, "<topic>rt/*</topic>") || strings.Contains(doc, "<topic>rq/*Request</topic>") || strings.Contains(doc, "<topic>rr/*Reply</topic>") {
		t.Errorf("the permissions allow more than the policy:\n%s", doc)
	}
	for _, w := range []string{"<subject_name>CN=/viewer</subject_name>", "<default>DENY</default>", "<max>230</max>"} {
		if !strings.Contains(doc, w) {
			t.Errorf("permissions lack %s", w)
		}
	}
	if _, err := Permissions("/viewer", Policy{Publish: []string{"saint/x"}}, k.CACert.NotBefore, k.CACert.NotAfter); err == nil {
		t.Error("a relative topic name was accepted")
	}
}
