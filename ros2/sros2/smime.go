package sros2

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"
)

var (
	oidData          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	oidSHA256        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidECDSAWithSHA  = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
)

// PKCS #7 (RFC 2315) SignedData, as much of it as a detached signature
// by one signer with authenticated attributes needs.
type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"optional"` // [0] EXPLICIT, built by hand
}

type signedData struct {
	Version          int
	DigestAlgorithms []pkix.AlgorithmIdentifier `asn1:"set"`
	ContentInfo      contentInfo
	Certificates     asn1.RawValue // [0] IMPLICIT SET OF Certificate
	SignerInfos      []signerInfo  `asn1:"set"`
}

type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

type signerInfo struct {
	Version                   int
	IssuerAndSerialNumber     issuerAndSerial
	DigestAlgorithm           pkix.AlgorithmIdentifier
	AuthenticatedAttributes   asn1.RawValue // [0] IMPLICIT SET OF Attribute
	DigestEncryptionAlgorithm pkix.AlgorithmIdentifier
	EncryptedDigest           []byte
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values []asn1.RawValue `asn1:"set"`
}

// canonicalText is what a PKCS7_TEXT signature covers: a text/plain MIME
// header and the document with CRLF line ends.
func canonicalText(doc []byte) []byte {
	var b bytes.Buffer
	b.WriteString("Content-Type: text/plain\r\n\r\n")
	lines := strings.SplitAfter(string(doc), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		b.WriteString(strings.TrimRight(l, "\r\n"))
		if strings.HasSuffix(l, "\n") {
			b.WriteString("\r\n")
		}
	}
	return b.Bytes()
}

// SignSMIME signs doc with the CA's key as `openssl smime -sign -text`
// (without -nodetach) does: an S/MIME multipart/signed document holding
// doc as text/plain and a detached PKCS #7 SignedData (SHA-256, ECDSA)
// over it, with the signer's certificate.
func SignSMIME(cert *x509.Certificate, key *ecdsa.PrivateKey, doc []byte, now time.Time) ([]byte, error) {
	signed := canonicalText(doc)
	digest := sha256.Sum256(signed)

	var attrs [][]byte
	for _, a := range []struct {
		oid asn1.ObjectIdentifier
		val any
	}{
		{oidContentType, oidData},
		{oidSigningTime, now.UTC()},
		{oidMessageDigest, digest[:]},
	} {
		v, err := asn1.Marshal(a.val)
		if err != nil {
			return nil, err
		}
		der, err := asn1.Marshal(attribute{Type: a.oid, Values: []asn1.RawValue{{FullBytes: v}}})
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, der)
	}
	// DER sorts a SET OF by its elements' encodings.
	sort.Slice(attrs, func(i, j int) bool { return bytes.Compare(attrs[i], attrs[j]) < 0 })
	attrBytes := bytes.Join(attrs, nil)
	// The signature covers the attributes as a universal SET, not as the
	// [0] they are tagged with in SignerInfo.
	attrSet, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSet, IsCompound: true, Bytes: attrBytes})
	if err != nil {
		return nil, err
	}
	attrDigest := sha256.Sum256(attrSet)
	sig, err := ecdsa.SignASN1(rand.Reader, key, attrDigest[:])
	if err != nil {
		return nil, err
	}
	sha256Alg := pkix.AlgorithmIdentifier{Algorithm: oidSHA256, Parameters: asn1.NullRawValue}
	sd := signedData{
		Version:          1,
		DigestAlgorithms: []pkix.AlgorithmIdentifier{sha256Alg},
		ContentInfo:      contentInfo{ContentType: oidData},
		Certificates:     asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: cert.Raw},
		SignerInfos: []signerInfo{{
			Version:                   1,
			IssuerAndSerialNumber:     issuerAndSerial{Issuer: asn1.RawValue{FullBytes: cert.RawIssuer}, Serial: cert.SerialNumber},
			DigestAlgorithm:           sha256Alg,
			AuthenticatedAttributes:   asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: attrBytes},
			DigestEncryptionAlgorithm: pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA},
			EncryptedDigest:           sig,
		}},
	}
	sdDER, err := asn1.Marshal(sd)
	if err != nil {
		return nil, err
	}
	p7, err := asn1.Marshal(contentInfo{ContentType: oidSignedData, Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: sdDER}})
	if err != nil {
		return nil, err
	}

	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	boundary := "----" + strings.ToUpper(hex.EncodeToString(nonce[:]))
	var out bytes.Buffer
	out.WriteString("MIME-Version: 1.0\n")
	fmt.Fprintf(&out, "Content-Type: multipart/signed; protocol=\"application/x-pkcs7-signature\"; micalg=\"sha-256\"; boundary=\"%s\"\n\n", boundary)
	out.WriteString("This is an S/MIME signed message\n\n")
	fmt.Fprintf(&out, "--%s\n", boundary)
	out.Write(signed)
	fmt.Fprintf(&out, "\n--%s\n", boundary)
	out.WriteString("Content-Type: application/x-pkcs7-signature; name=\"smime.p7s\"\n")
	out.WriteString("Content-Transfer-Encoding: base64\n")
	out.WriteString("Content-Disposition: attachment; filename=\"smime.p7s\"\n\n")
	b64 := base64.StdEncoding.EncodeToString(p7)
	for len(b64) > 64 {
		out.WriteString(b64[:64] + "\n")
		b64 = b64[64:]
	}
	out.WriteString(b64 + "\n\n")
	fmt.Fprintf(&out, "--%s--\n\n", boundary)
	return out.Bytes(), nil
}
