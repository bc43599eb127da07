package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// The robot namespace across processes: saint-server --robot-id 7 sees the
// saint-node started with --robot-id 7 announce itself, and never the one
// started without it, though both are on the server's NATS broker.
func TestRobotIDAcrossProcesses(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	srv := newServer(t, root, "--robot-id", "7")
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")
	node := func(id string, extra ...string) {
		args := append([]string{"--server", srv.natsURL(), "--hal", "sim", "--trust-first-server", "--sim-hw", "head", "--id", id,
			"--state-dir", filepath.Join(root, id)}, extra...)
		startProc(t, root, id, bin.node, args...)
	}
	node("e2e-robot7", "--robot-id", "7")
	node("e2e-elsewhere")
	bustest.CheckFor(t, 15*time.Second, 50*time.Millisecond, func() error {
		un, err := c.unadopted()
		if err != nil {
			return err
		}
		if _, ok := un["e2e-robot7"]; !ok {
			return fmt.Errorf("the node with --robot-id 7 is not in list_unadopted (have %d nodes)", len(un))
		}
		return nil
	})
	// Both nodes announce every half second; six announcements later the
	// other one is still not seen.
	time.Sleep(3 * time.Second)
	un, err := c.unadopted()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := un["e2e-elsewhere"]; ok {
		t.Error("the server with --robot-id 7 sees a node started without it")
	}
}
