// Package fwsign signs and verifies node firmware releases with Ed25519
// (crypto/ed25519): a release key signs what a firmware offer states — the
// version, the image's sha256 and its size — and a node installs an
// offered image only when the offer carries a valid signature by a key it
// trusts (built into its firmware, or given to it in a file). The image
// itself is then held to the signed sha256, so a node never installs bytes
// the release key did not sign, whoever answers its firmware check.
//
// Keys are stored in the standard formats: the private key as PKCS #8 in
// PEM ("PRIVATE KEY", file mode 0600), the public key as PKIX in PEM
// ("PUBLIC KEY"); openssl reads both. EncodePublic gives the compact form
// ("ed25519:" and the key's 32 bytes in base64) that a build embeds with
// -ldflags and manifests carry.
package fwsign
