package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
)

// TestSquatterLeavingLetsTheNodeIn plays a device on the robot's network
// that takes an unadopted node's id with a key of its own while the node
// is off the bus (rebooting, its link cut). The node, refused again and
// again while the device holds its id, keeps trying (nats.go alone gives
// up after the same authorization error twice); once the device leaves,
// the node is back on the adopt list with its own key within 10 s, and is
// adopted and ACTIVE. Real saint-server, its broker with TLS and nkeys,
// and a real saint-node process behind a TCP proxy that cuts its link.
func TestSquatterLeavingLetsTheNodeIn(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	ctl(t, "firmware", "publish", "--image", bin.node, "--version", firmwareVersion,
		"--configs", configsDir, "--out", filepath.Join(serverDataDir(root), "firmware"))
	srv := newServer(t, root)
	proxy := newTCPProxy(t, srv.natsAddr)
	n := &node{id: "e2e-squat-head", stateDir: filepath.Join(root, "e2e-squat-head")}
	n.proc = startProc(t, root, n.id, bin.node,
		"--server", "nats://"+proxy.addr(), "--hal", "sim", "--trust-first-server", "--sim-hw", "head", "--id", n.id, "--state-dir", n.stateDir,
		"--allow-unsigned-firmware")
	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")
	keyOf := func() (string, error) {
		un, err := c.unadopted()
		if err != nil {
			return "", err
		}
		st, ok := un[n.id]
		if !ok {
			return "", errNotYet(n.id + " not in list_unadopted")
		}
		return st.BusKey, nil
	}
	var nodeKey string
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		var err error
		if nodeKey, err = keyOf(); err == nil && nodeKey == "" {
			err = errNotYet("no bus key listed")
		}
		return err
	})
	kp, err := natsbus.ReadKey(filepath.Join(n.stateDir, "bus.nk"))
	if err != nil {
		t.Fatal(err)
	}
	if pub, _ := kp.PublicKey(); pub != nodeKey {
		t.Fatalf("list_unadopted shows key %s, the node's is %s", nodeKey, pub)
	}

	// The node's link is cut; the device takes its id, over TLS with the
	// server's CA as any client on the network can have it.
	proxy.setCut(true)
	ca, err := os.ReadFile(filepath.Join(srv.data, "bus", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := natsbus.TrustCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	squatter, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	squatterKey, _ := squatter.PublicKey()
	var sq *natsbus.Conn
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var err error
		sq, err = natsbus.Connect(srv.natsURL(), &natsbus.Options{Name: natsbus.NodeClientName(n.id), Key: squatter,
			InboxPrefix: natsbus.NodeInboxPrefix(n.id), TLS: tlsCfg})
		return err
	})
	defer func() { _ = sq.Close() }()
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if k, err := keyOf(); err != nil || k != squatterKey {
			return fmt.Errorf("%s listed with key %q (%v), want the squatter's", n.id, k, err)
		}
		return nil
	})

	// The link is back: the node's attempts reach the broker and are
	// refused while the device holds the id, more often than nats.go
	// alone would try.
	before := proxy.count()
	proxy.setCut(false)
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if got := proxy.count() - before; got < 4 {
			return errNotYet(fmt.Sprintf("%d connection attempts through the restored link", got))
		}
		return nil
	})
	if k, err := keyOf(); err != nil || k != squatterKey {
		t.Fatalf("while the device holds the id: %s listed with key %q (%v), want the squatter's", n.id, k, err)
	}
	if err := n.exited(); err != nil {
		t.Fatalf("saint-node exited: %v", err)
	}

	// The device leaves: the node is back with its own key within 10 s.
	_ = sq.Close()
	left := time.Now()
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if k, err := keyOf(); err != nil || k != nodeKey {
			return fmt.Errorf("%s listed with key %q (%v), want the node's %s", n.id, k, err, nodeKey)
		}
		return nil
	})
	t.Logf("the node was back on the adopt list %v after the device left", time.Since(left).Round(10*time.Millisecond))
	adoptedAt := time.Now()
	c.mustGet("adopt_node", map[string]any{"node_id": n.id, "role": "head", "bus_key": nodeKey}, nil)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error { return c.checkActive(n.id, "head", adoptedAt) })
	t.Logf("ACTIVE %v after the device left", time.Since(left).Round(10*time.Millisecond))
}
