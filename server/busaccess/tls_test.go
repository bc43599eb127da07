package busaccess_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestNodePinsTheServersCA: a node told to trust the first server
// (--trust-first-server) pins the CA on first contact, connects
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
		p, err := natsbus.OpenCAPin(natsbus.CAPinOptions{File: pin, TrustFirst: true})
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
	if p, err := natsbus.OpenCAPin(natsbus.CAPinOptions{File: pin}); err != nil || p.Fingerprint() != a.CAFingerprint() {
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

// TestEnrolledNodeTrustsOnlyItsServer: a node enrolled with its server's CA
// fingerprint refuses an impostor server (another CA), pins nothing from
// it and logs the refusal on the node, once a minute with a count; it
// connects to its own server. A node neither enrolled nor told to trust
// the first server connects to no server at all.
func TestEnrolledNodeTrustsOnlyItsServer(t *testing.T) {
	dir := t.TempDir()
	real, realNS := startBroker(t, filepath.Join(dir, "server"))
	fake, impostor := startBroker(t, filepath.Join(dir, "impostor"))
	key, err := natsbus.LoadOrCreateKey(filepath.Join(dir, "node", natsbus.NodeKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pinFile := filepath.Join(dir, "node", natsbus.NodeCAFile)
	logged := &errorRecords{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pin, err := natsbus.OpenCAPin(natsbus.CAPinOptions{
		File: pinFile, Enrolled: strings.ToUpper(real.CAFingerprint()),
		// Told to trust the first server too: the enrolment wins.
		TrustFirst: true, Log: slog.New(logged), Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	if pin.Mode() != "enrolled" || pin.Fingerprint() != real.CAFingerprint() {
		t.Fatalf("mode %q, fingerprint %q; want enrolled with %s", pin.Mode(), pin.Fingerprint(), real.CAFingerprint())
	}
	connect := func(url string, p *natsbus.CAPin) error {
		c, err := natsbus.Connect(url, &natsbus.Options{Name: natsbus.NodeClientName("n1"), Key: key, TLS: p.TLS(), InboxPrefix: natsbus.NodeInboxPrefix("n1")})
		if err != nil {
			return err
		}
		return c.Close()
	}
	for range 3 {
		if err := connect(impostor.ClientURL(), pin); err == nil || !strings.Contains(err.Error(), "enrolled with "+real.CAFingerprint()) {
			t.Fatalf("impostor: %v; want a refusal naming the enrolled CA", err)
		}
	}
	if _, err := os.Stat(pinFile); !os.IsNotExist(err) {
		t.Fatalf("the impostor's CA was written to %s (%v)", pinFile, err)
	}
	if got := logged.list(); len(got) != 1 || !strings.Contains(got[0], "server_ca_sha256="+fake.CAFingerprint()) {
		t.Fatalf("node log after three refusals within a minute: %q; want one error naming the server's CA", got)
	}
	now = now.Add(time.Minute)
	if err := connect(impostor.ClientURL(), pin); err == nil {
		t.Fatal("impostor accepted")
	}
	if got := logged.list(); len(got) != 2 || !strings.Contains(got[1], "refusals=3") {
		t.Fatalf("node log a minute later: %q; want a second error counting the three refusals since the first", got)
	}

	if err := connect(realNS.ClientURL(), pin); err != nil {
		t.Fatalf("the enrolled server: %v", err)
	}
	if p, err := natsbus.OpenCAPin(natsbus.CAPinOptions{File: pinFile}); err != nil || p.Fingerprint() != real.CAFingerprint() {
		t.Fatalf("CA copied beside the enrolment: %v, %v; want %s", p, err, real.CAFingerprint())
	}

	// Neither enrolled nor trusting the first server: nothing is trusted.
	bare := filepath.Join(dir, "bare", natsbus.NodeCAFile)
	p, err := natsbus.OpenCAPin(natsbus.CAPinOptions{File: bare, Log: slog.New(logged)})
	if err != nil {
		t.Fatal(err)
	}
	if err := connect(realNS.ClientURL(), p); err == nil || !strings.Contains(err.Error(), "--trust-first-server") {
		t.Fatalf("a node neither enrolled nor trusting the first server: %v; want a refusal saying how to enrol it", err)
	}
	if _, err := os.Stat(bare); !os.IsNotExist(err) {
		t.Fatalf("a CA was pinned without enrolment or --trust-first-server (%v)", err)
	}

	// A damaged enrolment is an error, never a fall back to trusting
	// whoever answers.
	for _, bad := range []string{"", "null", real.CAFingerprint()[:40], "zz" + real.CAFingerprint()[2:]} {
		if _, err := natsbus.OpenCAPin(natsbus.CAPinOptions{File: bare, Enrolled: bad + " "}); err == nil && bad != "" {
			t.Errorf("enrolled fingerprint %q accepted", bad)
		}
		f := filepath.Join(dir, "bad.sha256")
		if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if fp, err := natsbus.ReadCAFingerprintFile(f); err == nil {
			t.Errorf("enrolment file holding %q read as %q", bad, fp)
		}
	}
}

// errorRecords collects a node's error log lines, with their attributes.
type errorRecords struct {
	mu    sync.Mutex
	lines []string
}

func (e *errorRecords) Enabled(context.Context, slog.Level) bool { return true }
func (e *errorRecords) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	e.mu.Lock()
	e.lines = append(e.lines, line)
	e.mu.Unlock()
	return nil
}
func (e *errorRecords) WithAttrs([]slog.Attr) slog.Handler { return e }
func (e *errorRecords) WithGroup(string) slog.Handler      { return e }
func (e *errorRecords) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}
