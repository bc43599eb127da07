package e2e

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
)

// serverCA is the fingerprint of a server's bus CA, from its data
// directory, as the operator reads it in saint-server's start-up log.
func serverCA(t *testing.T, s *server) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.data, "bus", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s/bus/ca.pem holds no certificate", s.data)
	}
	return natsbus.CAFingerprint(block.Bytes)
}

// waitLog waits until p's log holds text.
func waitLog(t *testing.T, p *proc, text string) {
	t.Helper()
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		data, err := os.ReadFile(p.log)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), text) {
			return fmt.Errorf("%s's log has no %q yet", p.name, text)
		}
		return nil
	})
}

// TestEnrolledNodeRefusesAnImpostor is door 4 of issue 23 closed: a node
// enrolled before its first boot with the path flash_node.sh runs
// (saintctl nodes enrol: its key registered with the real server, the
// server's CA fingerprint written to its state directory) and first
// pointed at an attacker's saint-server (another CA) refuses it: the
// impostor never sees it, nothing of the impostor's is pinned, and the
// node's log says why. Pointed at its own server, it is listed with its
// enrolled key, marked enrolled, and adopted. saintctl refuses to enrol a
// node with a server whose CA is not the one given. The control: a node
// that was not enrolled and trusts the first server (--trust-first-server)
// is taken by the impostor.
func TestEnrolledNodeRefusesAnImpostor(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	for _, d := range []string{"real", "impostor"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	real := newServer(t, filepath.Join(root, "real"))
	impostor := newServer(t, filepath.Join(root, "impostor"))
	realCA, impostorCA := serverCA(t, real), serverCA(t, impostor)
	if realCA == impostorCA {
		t.Fatal("the two servers have the same CA")
	}
	realAPI := "ws://" + real.wsAddr + "/saint"
	impostorAPI := "ws://" + impostor.wsAddr + "/saint"
	const id = "enrolled-head"
	stateDir := filepath.Join(root, id)

	// Enrolling against the impostor, with the real server's fingerprint:
	// refused before anything is registered or written.
	if out := ctlFails(t, "--server", impostorAPI, "nodes", "enrol", id, "--out", stateDir, "--ca-sha256", realCA); !strings.Contains(out, "not the server you meant") {
		t.Errorf("enrolling with the impostor: %s", out)
	}
	if _, err := os.Stat(stateDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("enrolling with the impostor wrote %s (%v)", stateDir, err)
	}
	out := ctl(t, "--server", realAPI, "nodes", "enrol", id, "--out", stateDir, "--ca-sha256", realCA)
	key, err := natsbus.ReadKey(filepath.Join(stateDir, natsbus.NodeKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := key.PublicKey()
	if !strings.Contains(out, pub) {
		t.Errorf("saintctl nodes enrol printed %q, want the key %s", out, pub)
	}

	// First boot pointed at the impostor.
	args := []string{"--hal", "sim", "--sim-hw", "head", "--id", id, "--state-dir", stateDir, "--allow-unsigned-firmware"}
	n := startProc(t, root, id, bin.node, append([]string{"--server", impostor.natsURL()}, args...)...)
	waitLog(t, n, "server refused")
	waitLog(t, n, "server_ca_sha256="+impostorCA)
	imp := newAPI(t, impostorAPI)
	un, err := imp.unadopted()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := un[id]; ok {
		t.Fatalf("the impostor lists %s as unadopted: it connected", id)
	}
	if ca, err := os.ReadFile(filepath.Join(stateDir, natsbus.NodeCAFile)); err == nil {
		t.Fatalf("the node wrote a CA after meeting only the impostor: %s", ca)
	}

	// The operator points it at its own server.
	n.kill()
	n.args = append([]string{"--server", real.natsURL()}, args...)
	n.start()
	c := newAPI(t, realAPI)
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if err := n.exited(); err != nil {
			return err
		}
		un, err := c.unadopted()
		if err != nil {
			return err
		}
		st, ok := un[id]
		if !ok {
			return fmt.Errorf("%s not in the real server's list_unadopted", id)
		}
		if st.BusKey != pub || !st.BusKeyEnrolled || st.BusCA != realCA {
			return fmt.Errorf("%s listed with key %s (enrolled %v) and CA %s; want the enrolled %s and the server's %s", id, st.BusKey, st.BusKeyEnrolled, st.BusCA, pub, realCA)
		}
		return nil
	})
	adoptedAt := time.Now()
	c.mustGet("adopt_node", map[string]any{"node_id": id, "role": "head", "bus_key": pub}, nil)
	bustest.CheckFor(t, 15*time.Second, 50*time.Millisecond, func() error { return c.checkActive(id, "head", adoptedAt) })

	// The control: not enrolled, trusting the first server.
	const lab = "lab-head"
	startProc(t, root, lab, bin.node, "--server", impostor.natsURL(), "--hal", "sim", "--trust-first-server", "--sim-hw", "head",
		"--id", lab, "--state-dir", filepath.Join(root, lab), "--allow-unsigned-firmware")
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		un, err := imp.unadopted()
		if err != nil {
			return err
		}
		if st, ok := un[lab]; !ok || st.BusCA != impostorCA {
			return fmt.Errorf("the node trusting the first server is not the impostor's yet (%+v)", st)
		}
		return nil
	})
}
