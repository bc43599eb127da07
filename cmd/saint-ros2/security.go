package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/saint-os/saint/ros2/cyclone"
	"github.com/saint-os/saint/ros2/sros2"
)

// bridgeEnclave is the enclave the bridge uses in a keystore unless told
// otherwise: the ROS 2 node name it appears under.
const bridgeEnclave = "/saint_bridge"

// securityFlags registers --ros2-security and --ros2-enclave and returns
// what they resolve to: nil without --ros2-security. As a ROS 2 node
// does, the bridge takes its defaults from ROS_SECURITY_ENABLE=true,
// ROS_SECURITY_KEYSTORE and ROS_SECURITY_ENCLAVE_OVERRIDE; unlike a ROS 2
// node under ROS_SECURITY_STRATEGY=Permissive, it never falls back to no
// security when the files are missing.
func securityFlags(fs *flag.FlagSet) func() (*cyclone.Security, error) {
	defDir, defEnclave := "", bridgeEnclave
	if os.Getenv("ROS_SECURITY_ENABLE") == "true" {
		defDir = os.Getenv("ROS_SECURITY_KEYSTORE")
		if e := os.Getenv("ROS_SECURITY_ENCLAVE_OVERRIDE"); e != "" {
			defEnclave = e
		}
	}
	dir := fs.String("ros2-security", defDir, "use DDS Security (SROS2): an enclave directory (cert.pem, key.pem, permissions.p7s, …) or a keystore (saintctl ros2 keystore create) whose --ros2-enclave is used; peers then need an enclave of the same keystore (see docs/ros2.md) (default: ROS_SECURITY_KEYSTORE when ROS_SECURITY_ENABLE=true)")
	enclave := fs.String("ros2-enclave", defEnclave, "with --ros2-security DIR naming a keystore: the bridge's enclave in it (default: ROS_SECURITY_ENCLAVE_OVERRIDE, else "+bridgeEnclave+")")
	return func() (*cyclone.Security, error) {
		if *dir == "" {
			return nil, nil
		}
		e, err := sros2.OpenEnclave(*dir, *enclave)
		if err != nil {
			return nil, fmt.Errorf("--ros2-security: %w", err)
		}
		return &cyclone.Security{IdentityCA: e.IdentityCA, Cert: e.Cert, Key: e.Key, PermissionsCA: e.PermissionsCA,
			Governance: e.Governance, Permissions: e.Permissions, Enclave: *enclave}, nil
	}
}

// newParticipant joins the DDS domain, with DDS Security when sec is set.
func newParticipant(domain uint32, sec *cyclone.Security, log *slog.Logger) (*cyclone.Participant, error) {
	if sec == nil {
		return cyclone.NewParticipant(domain)
	}
	pp, err := cyclone.NewSecureParticipant(domain, *sec)
	if err != nil {
		return nil, fmt.Errorf("--ros2-security: %w", err)
	}
	log.Info("DDS Security on: only authenticated, permitted peers; traffic encrypted", "identity", sec.Cert)
	return pp, nil
}
