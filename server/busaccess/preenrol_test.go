package busaccess_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/server/busaccess"
)

// A node enrolled before its first boot holds its id with its key only:
// another key is refused under that id even while the node is away, the
// enrolled key is refused under another id, and enrolling a new key (a
// node flashed anew) shuts the old one and a squatter out. A node that was
// not enrolled still connects (--trust-first-server in a lab), but once
// enrolment is in use the activity log says so. The enrolments survive a
// restart.
func TestEnrolledKeyHoldsItsNodeID(t *testing.T) {
	dir := t.TempDir()
	evs := &events{}
	a, ns := plainBroker(t, busaccess.Options{Dir: dir})
	a.LogEventsTo(slog.New(evs))
	url := ns.ClientURL()
	node, nodeKey := newKey(t)
	squatter, squatterKey := newKey(t)
	_, freshKey := newKey(t)

	// Before any enrolment, a node connecting with any key is not worth
	// an event: that is how a lab runs.
	dialNode(t, url, "lab1", squatter).nc.Close()
	if got := evs.list(); len(got) != 0 {
		t.Fatalf("events without enrolment in use: %q", got)
	}

	// A squatter holds n1's place; enrolling n1 disconnects it.
	sq := dialNode(t, url, "n1", squatter)
	if err := a.Enrol("n1", nodeKey); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !sq.nc.IsClosed() {
			return errors.New("the squatter's connection under n1 is still open after n1 was enrolled")
		}
		return nil
	})
	if _, err := dial(url, squatter, natsbus.NodeClientName("n1")); !refused(err) {
		t.Fatalf("another key under the enrolled id n1: %v, want refused", err)
	}
	if _, err := dial(url, node, natsbus.NodeClientName("n2")); !refused(err) {
		t.Fatalf("the enrolled key under another id: %v, want refused", err)
	}
	dialNode(t, url, "n1", node)
	if !a.Enrolled("n1", nodeKey) || a.Enrolled("n1", squatterKey) || a.NodeKey("n1") != nodeKey {
		t.Fatalf("n1 enrolled with %v, connects with %s", a.Enrolments(), a.NodeKey("n1"))
	}

	// Enrolment in use: a node that was not enrolled connects, and the
	// activity log hears of it.
	dialNode(t, url, "lab2", squatter)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		for _, m := range evs.list() {
			if strings.Contains(m, "lab2") && strings.Contains(m, "not enrolled") {
				return nil
			}
		}
		return fmt.Errorf("no event for a node that was not enrolled: %q", evs.list())
	})

	// Refused enrolments.
	for _, c := range []struct{ id, key, want string }{
		{"n9", "not-a-key", "not a public user nkey"},
		{"bad id", freshKey, "node id"},
		{"n9", nodeKey, "enrolled as node n1"},
		{"n9", mustPublic(t, a), "server's own keys"},
	} {
		if err := a.Enrol(c.id, c.key); !errors.Is(err, busaccess.ErrNotEnrolable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Enrol(%q, %q): %v, want refused with %q", c.id, c.key, err, c.want)
		}
	}
	if err := a.Grant("lab2", "head", "", squatterKey); err != nil {
		t.Fatal(err)
	}
	if err := a.Enrol("lab2", freshKey); !errors.Is(err, busaccess.ErrNotEnrolable) || !strings.Contains(err.Error(), "adopted with another key") {
		t.Errorf("enrolling an adopted node with a new key: %v", err)
	}

	// The node flashed anew: its new key replaces the old, which is shut
	// out.
	reflashed, reflashedKey := newKey(t)
	old := dialNode(t, url, "n1", node)
	if err := a.Enrol("n1", reflashedKey); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !old.nc.IsClosed() {
			return errors.New("the old key's connection is still open after n1 was enrolled anew")
		}
		return nil
	})
	if _, err := dial(url, node, natsbus.NodeClientName("n1")); !refused(err) {
		t.Fatalf("the old key after re-enrolment: %v, want refused", err)
	}
	dialNode(t, url, "n1", reflashed)

	// A key connected under another id first is moved to its own.
	moved, movedKey := newKey(t)
	elsewhere := dialNode(t, url, "tmp-1", moved)
	if err := a.Enrol("n5", movedKey); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !elsewhere.nc.IsClosed() {
			return errors.New("the key's connection under tmp-1 is still open after it was enrolled as n5")
		}
		return nil
	})
	if a.NodeKey("tmp-1") != "" {
		t.Errorf("tmp-1 still held by %s", a.NodeKey("tmp-1"))
	}

	// Across a restart.
	b, err := busaccess.New(busaccess.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Enrolments(); len(got) != 2 || got[0].NodeID != "n1" || got[0].Key != reflashedKey || got[0].EnrolledAt.IsZero() {
		t.Errorf("enrolments after a restart: %+v", got)
	}
	for _, id := range []string{"n1", "n5"} {
		if ok, err := b.Unenrol(id); !ok || err != nil {
			t.Fatalf("unenrol %s: %v %v", id, ok, err)
		}
	}
	c, err := busaccess.New(busaccess.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Enrolments(); len(got) != 0 {
		t.Errorf("enrolments after unenrol and a restart: %+v", got)
	}
}

// mustPublic is the public key of the server's own bus connection.
func mustPublic(t *testing.T, a *busaccess.Authority) string {
	t.Helper()
	pub, err := a.ServerKey().PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// A damaged enrolments file stops the authority from starting, and stays
// where it is: the ids it enrols would otherwise take any key.
func TestDamagedEnrolmentsRefuseToStart(t *testing.T) {
	_, key := newKey(t)
	good := `[{"node_id": "n1", "key": "` + key + `", "enrolled_at": "2026-01-01T00:00:00Z"}]`
	for _, bad := range []string{"", "null", " null\n", good[:len(good)/2], "{}", `[null]`, `[{"node_id": "n1", "key": "U"}]`,
		`[{"node_id": "a b", "key": "` + key + `"}]`, good[:len(good)-1] + `,` + good[1:]} {
		dir := t.TempDir()
		path := filepath.Join(dir, "enrolled.json")
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := busaccess.New(busaccess.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "enrolled.json") {
			t.Errorf("enrolled.json holding %q: %v, want an error naming it", bad, err)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != bad {
			t.Errorf("enrolled.json holding %q was changed: %q, %v", bad, data, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "enrolled.json"), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := busaccess.New(busaccess.Options{Dir: dir})
	if err != nil || !a.Enrolled("n1", key) {
		t.Fatalf("a good enrolled.json: %v", err)
	}
}

// With RequireEnrolment, a node key that was neither enrolled nor adopted
// is refused; the enrolled node and one adopted before still connect.
func TestRequireEnrolment(t *testing.T) {
	dir := t.TempDir()
	a, ns := plainBroker(t, busaccess.Options{Dir: dir})
	url := ns.ClientURL()
	old, oldKey := newKey(t)
	dialNode(t, url, "old-1", old).nc.Close()
	if err := a.Grant("old-1", "head", "", oldKey); err != nil {
		t.Fatal(err)
	}
	ns.Shutdown()

	b, ns2 := plainBroker(t, busaccess.Options{Dir: dir, RequireEnrolment: true})
	url = ns2.ClientURL()
	node, nodeKey := newKey(t)
	stranger, _ := newKey(t)
	if err := b.Enrol("n1", nodeKey); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(url, stranger, natsbus.NodeClientName("n2")); !refused(err) {
		t.Errorf("a key neither enrolled nor adopted: %v, want refused", err)
	}
	dialNode(t, url, "n1", node)
	dialNode(t, url, "old-1", old)
}
