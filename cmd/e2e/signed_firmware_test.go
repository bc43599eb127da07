package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// TestOnlySignedFirmwareIsInstalled runs nodes built as `make firmware
// SIGN_KEY=...` builds them — the release key's public half built in —
// against a server that offers whatever it is given (--allow-unsigned, as
// an attacker answering firmware.check would): an unsigned image and one
// signed by another key are refused and the node stays ACTIVE on what it
// runs; the image the release key signed is installed.
func TestOnlySignedFirmwareIsInstalled(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	keys := filepath.Join(root, "keys")
	ctl(t, "firmware", "keygen", "--out", keys, "--name", "release")
	ctl(t, "firmware", "keygen", "--out", keys, "--name", "forger")
	release, forger := filepath.Join(keys, "release.key"), filepath.Join(keys, "forger.key")
	pub := strings.TrimSpace(ctl(t, "firmware", "pubkey", "--key", release))
	build := func(version string) string {
		out := filepath.Join(root, "saint-node-"+version)
		buildWith(t, out, "-ldflags", "-X main.version="+version+" -X main.firmwareKey="+pub, "github.com/saint-os/saint/cmd/saint-node")
		return out
	}
	v1, v2, v3 := build("1.0.0"), build("2.0.0"), build("3.0.0")

	ctl(t, "firmware", "publish", "--image", v1, "--version", "1.0.0", "--configs", configsDir,
		"--out", filepath.Join(serverDataDir(root), "firmware"), "--sign-key", release)
	srv := newServer(t, root)
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")
	n := &node{id: "signed", stateDir: filepath.Join(root, "signed")}
	n.proc = startProc(t, root, n.id, v1, "--server", srv.natsURL(), "--hal", "sim", "--trust-first-server", "--sim-hw", "head",
		"--id", n.id, "--state-dir", n.stateDir)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if _, err := c.checkRunning(n.id, "1.0.0", time.Time{}); err != nil {
			return err
		}
		// The announcement travels apart from the status: adopt once the
		// server lists the node as waiting.
		un, err := c.unadopted()
		if _, ok := un[n.id]; err == nil && !ok {
			err = fmt.Errorf("%s not in list_unadopted", n.id)
		}
		return err
	})
	adoptedAt := time.Now()
	c.mustGet("adopt_node", map[string]any{"node_id": n.id, "role": "head"}, nil)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error { return c.checkActive(n.id, "head", adoptedAt) })

	// runs checks that the node is ACTIVE as head on version, reported
	// after since.
	runs := func(version string, since time.Time) error {
		ni, err := c.info(n.id)
		if err != nil {
			return err
		}
		if ni.State != "ACTIVE" || ni.Status == nil || ni.Status.FirmwareVersion != version || !stampedSince(ni.Status, since) {
			return fmt.Errorf("get_node_info %s: state %s, status %+v; want ACTIVE on %s", n.id, ni.State, ni.Status, version)
		}
		return nil
	}
	upload := func(image, version string, signWith string) {
		args := []string{"firmware", "upload", image, "--version", version, "--server", "http://" + srv.httpAddr}
		if signWith != "" {
			args = append(args, "--sign-key", signWith)
		}
		ctl(t, args...)
	}
	for _, bad := range []struct{ name, version, key string }{
		{"unsigned", "2.0.0", ""},
		{"signed by another key", "2.0.1", forger},
	} {
		upload(v2, bad.version, bad.key)
		c.triggerUpdate(n.id, false)
		// Long enough for a download and an exec had the node taken it.
		time.Sleep(3 * time.Second)
		if err := runs("1.0.0", adoptedAt); err != nil {
			t.Fatalf("%s image offered: %v", bad.name, err)
		}
		if err := n.exited(); err != nil {
			t.Fatalf("%s image offered: %v", bad.name, err)
		}
	}

	upload(v3, "3.0.0", release)
	updateAt := time.Now()
	c.triggerUpdate(n.id, false)
	bustest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error { return runs("3.0.0", updateAt) })
}
