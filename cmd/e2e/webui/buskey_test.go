package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/busaccess"
	simboard "github.com/saint-os/saint/sim/board"
)

// TestAdoptPageRejectsAKey runs the adopt page against a server on an
// authenticated NATS bus, where a device has taken node id arm-9 with a
// key of its own: the page shows that key, and rejecting it (after the
// confirmation) disconnects the device, lists the key as rejected and
// refuses it from then on.
func TestAdoptPageRejectsAKey(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	t.Parallel()
	ctx := browser(t)
	srv, auth, ns := authServer(t)

	// The device: a node's client, with a key that is not the node's.
	squatter, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	squatterKey, _ := squatter.PublicKey()
	dev, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Name: natsbus.NodeClientName("arm-9"), Key: squatter, InboxPrefix: natsbus.NodeInboxPrefix("arm-9")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	announce := msg.NodeGPIOStatus{NodeID: "arm-9", HardwareRev: "Pi 5", FirmwareVersion: "1.0.0"}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			_ = dev.Publish(msg.NodeAnnounceTopic("arm-9"), announce)
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	// The page shows what list_unadopted says when it loads: wait until
	// the server has the device's announcement and key.
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		var key string
		if err := srv.Exec().Do(t.Context(), func() {
			for _, u := range srv.Adoption().Unadopted() {
				if u.NodeID == "arm-9" {
					key = u.BusKey
				}
			}
		}); err != nil {
			return err
		}
		if key != squatterKey {
			return fmt.Errorf("arm-9 unadopted with key %q", key)
		}
		return nil
	})
	p := newPage(t, ctx)
	p.open("http://"+srv.Addrs()["http"]+"/#/nodes/adopt/arm-9", "#reject-key")
	if got := p.eval(`document.querySelector('#reject-key').closest('.card').textContent`); !strings.Contains(got, squatterKey) {
		t.Fatalf("the adopt page does not show the device's key %s: %q", squatterKey, got)
	}
	if got := p.eval(`document.querySelector('#adopt-enrolment').textContent`); !strings.HasPrefix(got, "not enrolled") {
		t.Errorf("the adopt page's enrolment for the device's key: %q, want not enrolled", got)
	}
	p.click("#reject-key")
	p.click("#confirm-ok")
	p.until("back on the nodes page", `location.hash === '#/nodes'`)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		rejected := auth.Rejected()
		if len(rejected) != 1 || rejected[0].Key != squatterKey || rejected[0].NodeID != "arm-9" {
			b, _ := json.Marshal(rejected)
			return fmt.Errorf("rejected keys %s", b)
		}
		return nil
	})
	if _, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Name: natsbus.NodeClientName("arm-10"), Key: squatter, InboxPrefix: natsbus.NodeInboxPrefix("arm-10")}); err == nil {
		t.Error("the rejected key connected again under another id")
	}

	// A node enrolled before its first boot: the page says its key is the
	// enrolled one.
	enrolled, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	enrolledKey, _ := enrolled.PublicKey()
	if err := auth.Enrol("arm-11", enrolledKey); err != nil {
		t.Fatal(err)
	}
	node, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Name: natsbus.NodeClientName("arm-11"), Key: enrolled, InboxPrefix: natsbus.NodeInboxPrefix("arm-11")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	go func() {
		for {
			_ = node.Publish(msg.NodeAnnounceTopic("arm-11"), msg.NodeGPIOStatus{NodeID: "arm-11", HardwareRev: "Pi 5", FirmwareVersion: "1.0.0"})
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		var listed bool
		if err := srv.Exec().Do(t.Context(), func() {
			for _, u := range srv.Adoption().Unadopted() {
				listed = listed || u.NodeID == "arm-11" && u.BusKeyEnrolled
			}
		}); err != nil {
			return err
		}
		if !listed {
			return fmt.Errorf("arm-11 not listed with its enrolled key")
		}
		return nil
	})
	p.open("http://"+srv.Addrs()["http"]+"/#/nodes/adopt/arm-11", "#adopt-enrolment")
	if got := p.eval(`document.querySelector('#adopt-enrolment').textContent`); !strings.HasPrefix(got, "enrolled") {
		t.Errorf("the adopt page's enrolment for an enrolled node: %q", got)
	}
}

// authServer is a server on an authenticated NATS bus on 127.0.0.1.
func authServer(t *testing.T) (*server.Server, *busaccess.Authority, *broker.Server) {
	t.Helper()
	dir := t.TempDir()
	auth, err := busaccess.New(busaccess.Options{Dir: filepath.Join(dir, "bus"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := broker.Start(&broker.Options{Port: -1, Authentication: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	auth.Attach(ns.NATS())
	sb, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Name: "server", ServiceName: natsbus.ServerServicesName, Key: auth.ServerKey()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	srv, err := server.New(server.Options{Bus: sb, ConfigDir: filepath.Join("..", "..", "..", "fixtures", "config"), DataDir: filepath.Join(dir, "data"),
		NoAuth: true, HTTPAddr: "127.0.0.1:0", BusAccess: auth, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv, auth, ns
}

// TestAdoptPageComparesTheKeyFingerprint runs the adopt page against a
// server on an authenticated bus with a real node: the page labels the CA
// the node announces as its own claim, and adopts only once the operator
// has typed the fingerprint of the key the bus authenticated, as the node
// prints it at boot. A fingerprint of another key is refused on the
// bus_key field and the node stays unadopted.
func TestAdoptPageComparesTheKeyFingerprint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	t.Parallel()
	ctx := browser(t)
	srv, _, ns := authServer(t)
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	nb, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Name: natsbus.NodeClientName("arm-9"), Key: kp, InboxPrefix: natsbus.NodeInboxPrefix("arm-9")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nb.Close() })
	ex := executor.New(nil)
	board, err := simboard.New(&simboard.Options{NodeID: "arm-9", Profile: simboard.Arms, Clock: ex.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(node.Options{Exec: ex, Bus: nb, Board: board, StateDir: t.TempDir(), FirmwareVersion: "1.0.0",
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = ex.Run(runCtx) }()
	t.Cleanup(func() { _ = ex.Do(context.Background(), n.Stop); stop(); <-ran })
	n.Start()
	state := func() (unadopted, adopted bool) {
		_ = srv.Exec().Do(t.Context(), func() {
			for _, u := range srv.Adoption().Unadopted() {
				unadopted = unadopted || (u.NodeID == "arm-9" && u.BusKey == pub)
			}
			for _, a := range srv.Adoption().Adopted() {
				adopted = adopted || (a.NodeID == "arm-9" && a.Role == "arms" && a.Instance == "left")
			}
		})
		return
	}
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if u, _ := state(); !u {
			return errors.New("arm-9 not unadopted with its key yet")
		}
		return nil
	})

	p := newPage(t, ctx)
	p.open("http://"+srv.Addrs()["http"]+"/#/nodes/adopt/arm-9", "#adopt-fingerprint")
	info := p.eval(`document.querySelector('#reject-key').closest('.card').textContent`)
	if !strings.Contains(info, pub) || !strings.Contains(info, "its own claim") {
		t.Errorf("node information %q: want the authenticated key and the CA labelled as the node's own claim", info)
	}
	p.click("#role-arms-left")
	other, _ := nkeys.CreateUser()
	otherKey, _ := other.PublicKey()
	p.setValue("#adopt-fingerprint", natsbus.KeyFingerprint(otherKey))
	p.click("#adopt-submit")
	p.until("the fingerprint refused", `document.querySelector('#err-bus_key, #err-bus-key') !== null`)
	if _, adopted := state(); adopted {
		t.Fatal("adopted with the fingerprint of another key")
	}
	p.setValue("#adopt-fingerprint", strings.ToLower(natsbus.KeyFingerprint(pub)))
	p.click("#adopt-submit")
	p.until("back on the nodes page", `location.hash === '#/nodes'`)
	bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if _, adopted := state(); !adopted {
			return errors.New("arm-9 not adopted as arms left")
		}
		return nil
	})
}
