// Package sros2 makes SROS2-style keystores for DDS Security (OMG DDS
// Security 1.1: PKI-DH authentication, permissions access control,
// AES-GCM-GMAC encryption), as `ros2 security create_keystore` and
// `create_enclave` (sros2, ROS 2 Humble) lay them out, so that the ROS 2
// bridge and ROS 2 workstations share one certificate authority:
//
//	DIR/public/ca.cert.pem            the CA (identity and permissions CA alike,
//	DIR/public/identity_ca.cert.pem   as sros2 makes it by default)
//	DIR/public/permissions_ca.cert.pem
//	DIR/private/ca.key.pem            the CA's key (0600; keep it off the robot)
//	DIR/enclaves/governance.xml       the domain rules: only authenticated,
//	DIR/enclaves/governance.p7s       permitted participants; everything encrypted
//	DIR/enclaves/NAME/cert.pem        the enclave's identity (CN=NAME), key.pem,
//	                                  identity_ca.cert.pem, permissions_ca.cert.pem,
//	                                  governance.p7s, permissions.xml, permissions.p7s
//
// The .p7s files are S/MIME documents (multipart/signed, a detached
// PKCS#7 SignedData over the text/plain document) as OpenSSL's
// SMIME_write_PKCS7 with PKCS7_DETACHED|PKCS7_TEXT writes them, which is
// what sros2 writes and what Cyclone DDS's and Fast DDS's access control
// plugins read. Keys are ECDSA P-256 (DDS Security 9.3.1), certificates
// SHA-256-signed X.509. Everything is written with the standard library.
//
// Topic names in permissions follow ROS 2's DDS mangling: a ROS topic
// /a/b is the DDS topic rt/a/b, a service /s is rq/sRequest and
// rr/sReply.
package sros2
