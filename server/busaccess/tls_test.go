package busaccess_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/server/busaccess"
)

// startBroker runs an authenticating broker with TLS from the Authority
// in dir, on a free port of 127.0.0.1.
func startBroker(t *testing.T, dir string) (*busaccess.Authority, *broker.Server) {
	t.Helper()
	a, err := busaccess.New(busaccess.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := a.ServerTLS("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := broker.Start(&broker.Options{Port: -1, Authentication: a, TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	a.Attach(ns.NATS())
	return a, ns
}

// TestNodePinsTheServersCA: a node pins the CA on first contact, connects
// again to the same server (restarted, same CA), and refuses a server with
// another CA; a client without TLS is refused, and tools trust the CA file.
func TestNodePinsTheServersCA(t *testing.T) {
	dir := t.TempDir()
	a, ns := startBroker(t, filepath.Join(dir, "server"))
	if fp := a.CAFingerprint(); len(fp) != 64 {
		t.Fatalf("CA fingerprint %q", fp)
	}
	for _, f := range []string{"ca-key.pem", "server-key.pem", "server.nk", "ca.pem"} {
		if st, err := os.Stat(filepath.Join(dir, "server", f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, st.Mode().Perm())
		}
	}
	key, err := natsbus.LoadOrCreateKey(filepath.Join(dir, "node", "bus.nk"))
	if err != nil {
		t.Fatal(err)
	}
	pin := filepath.Join(dir, "node", "bus-ca.pem")
	connectNode := func(url string) error {
		p, err := natsbus.PinCA(pin, nil)
		if err != nil {
			return err
		}
		c, err := natsbus.Connect(url, &natsbus.Options{Name: natsbus.NodeClientName("n1"), Key: key, TLS: p.TLS(), InboxPrefix: natsbus.NodeInboxPrefix("n1")})
		if err != nil {
			return err
		}
		return c.Close()
	}
	if err := connectNode(ns.ClientURL()); err != nil {
		t.Fatalf("first contact: %v", err)
	}
	if p, err := natsbus.PinCA(pin, nil); err != nil || p.Fingerprint() != a.CAFingerprint() {
		t.Fatalf("pinned %v, %v; want the server's CA %s", p, err, a.CAFingerprint())
	}

	// The same server restarted: same CA, same certificate, accepted.
	ns.Shutdown()
	a2, ns2 := startBroker(t, filepath.Join(dir, "server"))
	if a2.CAFingerprint() != a.CAFingerprint() {
		t.Fatal("the CA changed across a restart")
	}
	if err := connectNode(ns2.ClientURL()); err != nil {
		t.Fatalf("after restart: %v", err)
	}

	// Another server (another CA): refused.
	_, other := startBroker(t, filepath.Join(dir, "impostor"))
	if err := connectNode(other.ClientURL()); err == nil || !strings.Contains(err.Error(), "pinned CA") && !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("impostor: %v, want a refusal naming the pinned CA", err)
	}

	// Without TLS, even with a good key: refused.
	if c, err := natsbus.Connect(ns2.ClientURL(), &natsbus.Options{Key: a2.ServerKey()}); err == nil {
		c.Close()
		t.Fatal("a client without TLS was accepted")
	}
	// Tools trust the CA file.
	cfg, err := natsbus.TrustCA(a2.CAPEM())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := natsbus.ReadKey(a2.KeyFile(busaccess.ToolsKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := natsbus.Connect(ns2.ClientURL(), &natsbus.Options{Key: tools, TLS: cfg})
	if err != nil {
		t.Fatalf("tools: %v", err)
	}
	c.Close()
}
