package cyclone

/*
#include <stdlib.h>
#include "dds/dds.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// Security is what a participant needs for DDS Security (the
// dds.sec.* properties): its identity, the CAs, the governance and its
// permissions, as files (an sros2 enclave's).
type Security struct {
	IdentityCA    string // identity_ca.cert.pem
	Cert          string // cert.pem: the participant's identity
	Key           string // key.pem
	PermissionsCA string // permissions_ca.cert.pem
	Governance    string // governance.p7s
	Permissions   string // permissions.p7s
	// Enclave is the enclave's name (e.g. /saint_bridge), which the
	// participant's USER_DATA carries as ROS 2's middlewares do; "" is
	// the root enclave, "/".
	Enclave string
}

// pluginDirs are where Debian's libddsc0 ships Cyclone DDS's security
// plugins (outside the library search path); elsewhere the dynamic
// loader finds them by name.
var pluginDirs = []string{"/usr/lib/x86_64-linux-gnu/libddsc0debian", "/usr/lib/aarch64-linux-gnu/libddsc0debian",
	"/usr/lib/arm-linux-gnueabihf/libddsc0debian"}

// securityPlugin is the library path of a security plugin: Debian's, or
// the name for the loader to find.
func securityPlugin(name string) string {
	for _, d := range pluginDirs {
		p := filepath.Join(d, "lib"+name+".so")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}

// properties are the participant QoS properties that make Cyclone DDS
// load its builtin plugins: PKI-DH authentication, permissions access
// control, AES-GCM-GMAC cryptography.
func (s Security) properties() (map[string]string, error) {
	files := map[string]string{
		"dds.sec.auth.identity_ca":          s.IdentityCA,
		"dds.sec.auth.identity_certificate": s.Cert,
		"dds.sec.auth.private_key":          s.Key,
		"dds.sec.access.permissions_ca":     s.PermissionsCA,
		"dds.sec.access.governance":         s.Governance,
		"dds.sec.access.permissions":        s.Permissions,
	}
	props := map[string]string{
		"dds.sec.auth.library.path":       securityPlugin("dds_security_auth"),
		"dds.sec.auth.library.init":       "init_authentication",
		"dds.sec.auth.library.finalize":   "finalize_authentication",
		"dds.sec.access.library.path":     securityPlugin("dds_security_ac"),
		"dds.sec.access.library.init":     "init_access_control",
		"dds.sec.access.library.finalize": "finalize_access_control",
		"dds.sec.crypto.library.path":     securityPlugin("dds_security_crypto"),
		"dds.sec.crypto.library.init":     "init_crypto",
		"dds.sec.crypto.library.finalize": "finalize_crypto",
	}
	for k, f := range files {
		if f == "" {
			return nil, fmt.Errorf("cyclone: security: %s not given", k)
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("cyclone: security: %s: %w", k, err)
		}
		props[k] = "file:" + abs
	}
	return props, nil
}

// NewSecureParticipant joins DDS domain domain with DDS Security: it
// authenticates peers against sec's identity CA, talks only to those the
// governance and their permissions allow, and encrypts what the
// governance says. Creating it fails if the plugins cannot load or the
// files are refused (an identity not signed by the CA, a document whose
// signature does not verify).
func NewSecureParticipant(domain uint32, sec Security) (*Participant, error) {
	props, err := sec.properties()
	if err != nil {
		return nil, err
	}
	qos := C.dds_create_qos()
	defer C.dds_delete_qos(qos)
	for k, v := range props {
		ck, cv := C.CString(k), C.CString(v)
		C.dds_qset_prop(qos, ck, cv)
		C.free(unsafe.Pointer(ck))
		C.free(unsafe.Pointer(cv))
	}
	return newParticipant(domain, qos, enclaveUserData(sec.Enclave))
}
