package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/ros2/sros2"
)

// TestROS2Keystore makes a keystore and enclaves as docs/ros2.md says,
// and finds every file saint-ros2 and a ROS 2 workstation need, with the
// permissions the flags ask for.
func TestROS2Keystore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keystore")
	var out strings.Builder
	if err := run([]string{"ros2", "keystore", "create", dir}, &out); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"ros2", "keystore", "create", dir}, io.Discard); err == nil {
		t.Error("a second keystore was created over the first")
	}
	if err := run([]string{"ros2", "keystore", "enclave", dir, "/saint_bridge"}, &out); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"ros2", "keystore", "enclave", dir, "/viewer", "--publish", "", "--call", "/saint/system/status"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{sros2.CACertFile, sros2.CAKeyFile, sros2.GovernanceFile, sros2.SignedGovernanceFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, e := range []string{"/saint_bridge", "/viewer"} {
		if _, err := sros2.OpenEnclave(dir, e); err != nil {
			t.Errorf("enclave %s: %v", e, err)
		}
	}
	perms, err := os.ReadFile(filepath.Join(dir, "enclaves", "viewer", sros2.PermissionsFile))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(perms)
	publish := doc[strings.Index(doc, "<publish>"):strings.Index(doc, "</publish>")]
	if strings.Contains(publish, "<topic>rt/*</topic>") || strings.Contains(publish, "rt/saint") || !strings.Contains(publish, "rq/saint/system/statusRequest") {
		t.Errorf("--publish '' --call /saint/system/status: publish rule\n%s", publish)
	}
	subscribe := doc[strings.Index(doc, "<subscribe>"):strings.Index(doc, "</subscribe>")]
	if !strings.Contains(subscribe, "<topic>rt/*</topic>") {
		t.Errorf("without --subscribe every topic may be subscribed to:\n%s", doc)
	}
	for _, bad := range [][]string{
		{"ros2", "keystore", "enclave", dir, "saint_bridge"},
		{"ros2", "keystore", "enclave", dir, "/x", "--publish", "cmd_vel"},
		{"ros2", "keystore", "enclave", filepath.Join(t.TempDir(), "none"), "/x"},
		{"ros2", "keystore"},
	} {
		if err := run(bad, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
