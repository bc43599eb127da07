package main

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/ros2/sros2"
)

func resolveSecurity(t *testing.T, args ...string) (string, error) {
	t.Helper()
	fs := flag.NewFlagSet("saint-ros2", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	security := securityFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	sec, err := security()
	if err != nil || sec == nil {
		return "", err
	}
	return sec.Cert, nil
}

// TestSecurityFlags: --ros2-security takes a keystore (its /saint_bridge
// enclave, or --ros2-enclave) or an enclave directory, and defaults from
// ROS 2's own variables; a keystore without the enclave is an error
// naming it, never a bridge without security.
func TestSecurityFlags(t *testing.T) {
	ks := t.TempDir()
	k, err := sros2.Create(ks)
	if err != nil {
		t.Fatal(err)
	}
	bridgeDir, err := k.CreateEnclave(bridgeEnclave, sros2.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	otherDir, err := k.CreateEnclave("/robots/r7", sros2.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROS_SECURITY_ENABLE", "")
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string // the enclave directory, "" for none
	}{
		{nil, nil, ""},
		{nil, []string{"--ros2-security", ks}, bridgeDir},
		{nil, []string{"--ros2-security", ks, "--ros2-enclave", "/robots/r7"}, otherDir},
		{nil, []string{"--ros2-security", otherDir}, otherDir},
		{map[string]string{"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_KEYSTORE": ks}, nil, bridgeDir},
		{map[string]string{"ROS_SECURITY_ENABLE": "true", "ROS_SECURITY_KEYSTORE": ks, "ROS_SECURITY_ENCLAVE_OVERRIDE": "/robots/r7"}, nil, otherDir},
		{map[string]string{"ROS_SECURITY_ENABLE": "false", "ROS_SECURITY_KEYSTORE": ks}, nil, ""},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		got, err := resolveSecurity(t, c.args...)
		if err != nil {
			t.Errorf("%v %v: %v", c.env, c.args, err)
		} else if want := ""; c.want != "" && got != filepath.Join(c.want, sros2.CertFile) || c.want == "" && got != want {
			t.Errorf("%v %v: identity %q, want the one in %q", c.env, c.args, got, c.want)
		}
		for k := range c.env {
			t.Setenv(k, "")
		}
	}
	if _, err := resolveSecurity(t, "--ros2-security", ks, "--ros2-enclave", "/nobody"); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("a keystore without the enclave: %v", err)
	}
	if _, err := resolveSecurity(t, "--ros2-security", t.TempDir()); err == nil {
		t.Error("an empty directory was taken for a keystore")
	}
}
