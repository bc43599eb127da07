package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
)

// TestFlashNodeEnrolsTheNode runs deploy/scripts/flash_node.sh for real
// against a real saint-server, with ssh and scp replaced by stand-ins for
// the Pi: ssh answers the serial number and records every other command,
// scp copies into a directory. The script enrols the node (saintctl nodes
// enrol against the server's API), copies its key and the server's CA
// fingerprint over and installs them before it starts the service; a
// saint-node given those two files, as the install leaves them, is listed
// by the server as pi-<serial> with its enrolled key.
func TestFlashNodeEnrolsTheNode(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	srv := newServer(t, root)
	pi := filepath.Join(root, "pi")       // what scp copied to the Pi
	tools := filepath.Join(root, "tools") // ssh and scp stand-ins
	for _, d := range []string{pi, tools} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sshLog := filepath.Join(root, "ssh.log")
	writeScript(t, filepath.Join(tools, "ssh"), `#!/bin/sh
script=$(cat)
case $script in
*/proc/cpuinfo*) echo 10000000ABCDEF12 ;;
*) printf '%s\n' "$script" >>`+sshLog+` ;;
esac
`)
	writeScript(t, filepath.Join(tools, "scp"), `#!/bin/sh
# scp FILE... HOST:DEST: the files go to the Pi's directory.
while [ $# -gt 1 ]; do cp "$1" `+pi+`/; shift; done
`)
	image := filepath.Join(root, "saint_node.img")
	if err := os.WriteFile(image, []byte("node image"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "../../deploy/scripts/flash_node.sh", "--host", "pi@node1", "--image", image,
		"--server", srv.natsURL(), "--api", "ws://"+srv.wsAddr+"/saint", "--ca-sha256", serverCA(t, srv))
	cmd.Env = append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"), "SAINTCTL="+bin.ctl, "SAINT_DRY_RUN=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("flash_node.sh: %v\n%s", err, out)
	}
	const id = "pi-10000000abcdef12"
	if !strings.Contains(string(out), "Enrolled as "+id) {
		t.Errorf("flash_node.sh said:\n%s", out)
	}
	remote, err := os.ReadFile(sshLog)
	if err != nil {
		t.Fatal(err)
	}
	install := strings.Index(string(remote), "/var/lib/saint/bus.nk")
	start := strings.Index(string(remote), "systemctl daemon-reload && systemctl enable --now saint-node")
	if install < 0 || start < install {
		t.Errorf("the key is not installed before the service starts (at %d, %d):\n%s", install, start, remote)
	}
	for _, f := range []string{natsbus.NodeKeyFile, natsbus.NodeEnrolledCAFile} {
		if _, err := os.Stat(filepath.Join(pi, f)); err != nil {
			t.Fatalf("%s not copied to the Pi: %v", f, err)
		}
	}

	// The node as the install leaves it: its key and the CA fingerprint
	// in its state directory.
	stateDir := filepath.Join(root, id)
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{natsbus.NodeKeyFile, natsbus.NodeEnrolledCAFile} {
		data, err := os.ReadFile(filepath.Join(pi, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stateDir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	key, err := natsbus.ReadKey(filepath.Join(stateDir, natsbus.NodeKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := key.PublicKey()
	n := startProc(t, root, id, bin.node, "--server", srv.natsURL(), "--hal", "sim", "--sim-hw", "bare", "--id", id,
		"--state-dir", stateDir, "--allow-unsigned-firmware")
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if err := n.exited(); err != nil {
			return err
		}
		un, err := c.unadopted()
		if err != nil {
			return err
		}
		if st, ok := un[id]; !ok || st.BusKey != pub || !st.BusKeyEnrolled {
			return fmt.Errorf("%s listed as %+v; want its enrolled key %s", id, st, pub)
		}
		return nil
	})
}

func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
