package natsbus_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
)

// gate is a broker's authentication that lets every client in while
// open, and refuses them (an authorization violation) while shut: what a
// node meets while another device holds its id.
type gate struct {
	open    atomic.Bool
	refused atomic.Int64
	mu      sync.Mutex
	cids    []uint64
}

func (g *gate) Check(c natsserver.ClientAuthentication) bool {
	if !g.open.Load() {
		g.refused.Add(1)
		return false
	}
	g.mu.Lock()
	g.cids = append(g.cids, c.(interface{ GetID() uint64 }).GetID())
	g.mu.Unlock()
	return true
}

// links records what Options.OnLink is told.
type links struct {
	mu  sync.Mutex
	all []natsbus.Link
}

func (l *links) add(k natsbus.Link) { l.mu.Lock(); l.all = append(l.all, k); l.mu.Unlock() }
func (l *links) last() (natsbus.Link, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.all) == 0 {
		return natsbus.Link{}, 0
	}
	return l.all[len(l.all)-1], len(l.all)
}

// A client refused again and again (nats.go's default gives up after
// the same authorization error twice) keeps trying, says so through
// OnLink, and is back once the server lets it in.
func TestReconnectsThroughRefusedAuthorization(t *testing.T) {
	g := &gate{}
	g.open.Store(true)
	srv, err := broker.Start(&broker.Options{Host: "127.0.0.1", Port: -1, Authentication: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	var seen links
	c, err := natsbus.Connect(srv.ClientURL(), &natsbus.Options{Name: t.Name(), ReconnectWait: 10 * time.Millisecond,
		MaxReconnectWait: 50 * time.Millisecond, OnLink: seen.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	g.open.Store(false)
	g.mu.Lock()
	cids := append([]uint64(nil), g.cids...)
	g.mu.Unlock()
	for _, id := range cids {
		_ = srv.NATS().DisconnectClientByID(id)
	}
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := g.refused.Load(); n < 5 {
			return fmt.Errorf("refused %d times", n)
		}
		return nil
	})
	if c.NATS().IsClosed() {
		t.Fatal("the client gave up after its authorization was refused")
	}
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if l, _ := seen.last(); l.Up || l.Attempts < 3 || l.Err == nil {
			return fmt.Errorf("last link report %+v, want down after 3 attempts or more with the error", l)
		}
		return nil
	})
	g.open.Store(true)
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if !c.IsConnected() {
			return errors.New("not reconnected")
		}
		if l, _ := seen.last(); !l.Up || l.Attempts < 3 || l.Err == nil || !strings.Contains(strings.ToLower(l.Err.Error()), "authorization") {
			return fmt.Errorf("last link report %+v, want up after 3 attempts or more, the last refused", l)
		}
		return nil
	})
}

// A client that retries its first connection (Options.RetryConnect) is
// refused too until it is let in, and then connects.
func TestFirstConnectionRetriesRefusedAuthorization(t *testing.T) {
	g := &gate{}
	srv, err := broker.Start(&broker.Options{Host: "127.0.0.1", Port: -1, Authentication: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	var seen links
	c, err := natsbus.Connect(srv.ClientURL(), &natsbus.Options{Name: t.Name(), RetryConnect: true, ReconnectWait: 10 * time.Millisecond,
		MaxReconnectWait: 50 * time.Millisecond, OnLink: seen.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := g.refused.Load(); n < 5 {
			return fmt.Errorf("refused %d times", n)
		}
		return nil
	})
	if c.NATS().IsClosed() {
		t.Fatal("the client gave up its first connection after its authorization was refused")
	}
	g.open.Store(true)
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if !c.IsConnected() {
			return errors.New("not connected")
		}
		if l, _ := seen.last(); !l.Up {
			return fmt.Errorf("last link report %+v, want up", l)
		}
		return nil
	})
}
