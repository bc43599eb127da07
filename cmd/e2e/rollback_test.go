package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// TestDowngradeNeedsThePermission is the anti-rollback of issue 23's door
// 4 across real processes: a node built with the release key runs 0.3.0;
// its server, restarted on a tree publishing the signed 0.2.5, offers it
// at a forced update, and the node refuses it (no image installed, still
// 0.3.0). Published with the release key's downgrade permission, 0.2.5 is
// installed. The node's floor stays 0.3.0 through a restart: the 0.2.9
// the server offers then, signed but without a permission, is refused.
func TestDowngradeNeedsThePermission(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	keys := filepath.Join(root, "keys")
	ctl(t, "firmware", "keygen", "--out", keys, "--name", "release")
	release := filepath.Join(keys, "release.key")
	pub := strings.TrimSpace(ctl(t, "firmware", "pubkey", "--key", release))
	build := func(version string) string {
		out := filepath.Join(root, "saint-node-"+version)
		buildWith(t, out, "-ldflags", "-X main.version="+version+" -X main.firmwareKey="+pub, "github.com/saint-os/saint/cmd/saint-node")
		return out
	}
	v030, v025 := build("0.3.0"), build("0.2.5")
	fwDir := filepath.Join(serverDataDir(root), "firmware")
	publish := func(image, version string, extra ...string) {
		ctl(t, append([]string{"firmware", "publish", "--image", image, "--version", version, "--configs", configsDir,
			"--out", fwDir, "--sign-key", release}, extra...)...)
	}
	publish(v030, "0.3.0")
	srv := newServer(t, root)
	// republish stops the server, publishes on disk and starts it again:
	// a running server reads its tree when it starts.
	republish := func(image, version string, extra ...string) {
		srv.kill()
		publish(image, version, extra...)
		if err := os.Remove(srv.addrFile); err != nil {
			t.Fatal(err)
		}
		srv.start()
		srv.waitUp()
	}
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")

	const id = "rollback"
	stateDir := filepath.Join(root, id)
	n := startProc(t, root, id, v030, "--server", srv.natsURL(), "--hal", "sim", "--trust-first-server", "--sim-hw", "bare",
		"--id", id, "--state-dir", stateDir, "--healthy-after", "1s", "--trial-timeout", "20s")
	start := time.Now()
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_, err := c.checkRunning(id, "0.3.0", start)
		return err
	})
	forceUpdate := func() time.Time {
		t.Helper()
		at := time.Now()
		bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
			var res updateResult
			if err := c.get("trigger_update", map[string]any{"node_id": id, "force": true}, &res); err != nil {
				return err
			}
			if len(res.Nodes) != 1 || !res.Nodes[0].Success {
				return fmt.Errorf("trigger_update: %+v", res)
			}
			return nil
		})
		return at
	}
	// refused waits for the node to say it refused version as older than
	// the floor, still running running.
	refused := func(version, running string, since time.Time) {
		t.Helper()
		bustest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
			if err := n.exited(); err != nil {
				return err
			}
			st, err := c.checkRunning(id, running, since)
			if err != nil {
				return err
			}
			if !strings.Contains(st.Message, "firmware "+version+" refused") || !strings.Contains(st.Message, "older than 0.3.0") {
				return fmt.Errorf("status message %q; want %s refused as older than 0.3.0", st.Message, version)
			}
			return nil
		})
	}
	installed := filepath.Join(stateDir, "firmware", "installed.yaml")

	// 0.2.5 signed, without a permission: refused.
	republish(v025, "0.2.5")
	refused("0.2.5", "0.3.0", forceUpdate())
	if _, err := os.Stat(installed); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an image was installed for a refused downgrade (%v)", err)
	}

	// With the release key's permission: installed, the node runs 0.2.5.
	republish(v025, "0.2.5", "--allow-downgrade")
	at := forceUpdate()
	bustest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if err := n.exited(); err != nil {
			return err
		}
		_, err := c.checkRunning(id, "0.2.5", at)
		return err
	})
	trial := filepath.Join(stateDir, "firmware", "trial.yaml")
	bustest.CheckFor(t, 15*time.Second, 100*time.Millisecond, func() error {
		if _, err := os.Stat(trial); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("trial record %s still there (%v)", trial, err)
		}
		return nil
	})

	// A restart (SIGKILL, as at a power cut): the floor is still 0.3.0,
	// so a signed 0.2.9 without a permission is refused. (Its bytes are
	// the 0.2.5 build: had the node taken it, it would say so in its
	// status rather than refuse it.)
	n.kill()
	republish(v025, "0.2.9")
	n.start()
	refused("0.2.9", "0.2.5", forceUpdate())
	floor, err := os.ReadFile(filepath.Join(stateDir, "firmware_floor.yaml"))
	if err != nil || !strings.Contains(string(floor), "version: 0.3.0") {
		t.Errorf("firmware_floor.yaml: %q, %v; want version 0.3.0", floor, err)
	}
}
