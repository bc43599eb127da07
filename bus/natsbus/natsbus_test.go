package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/hal/executor"
)

func startServer(t *testing.T, port int) *broker.Server {
	t.Helper()
	s, err := broker.Start(&broker.Options{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t *testing.T, url string) *natsbus.Conn {
	t.Helper()
	c, err := natsbus.Connect(url, &natsbus.Options{Name: t.Name(), ReconnectWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConformance(t *testing.T) {
	srv := startServer(t, 0)
	bustest.RunConformance(t, func(t *testing.T) (pub, sub bus.Bus) {
		return connect(t, srv.ClientURL()), connect(t, srv.ClientURL())
	})
}

func TestStartServerPortInUse(t *testing.T) {
	srv := startServer(t, 0)
	start := time.Now()
	_, err := broker.Start(&broker.Options{Port: srv.Port()})
	if err == nil {
		t.Fatal("second server on the same port started")
	}
	if !strings.Contains(err.Error(), fmt.Sprint(srv.Port())) {
		t.Errorf("error %q does not name the port", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("failing took %v", el)
	}
}

func TestConnectNoServer(t *testing.T) {
	url := "nats://" + freeAddr(t)
	if _, err := natsbus.Connect(url, nil); err == nil {
		t.Fatal("Connect to nothing succeeded")
	}
	// With RetryConnect a node may start before its server.
	c, err := natsbus.Connect(url, &natsbus.Options{RetryConnect: true, ReconnectWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("Connect with RetryConnect: %v", err)
	}
	defer c.Close()
	if c.IsConnected() {
		t.Fatal("connected to nothing")
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "nats://"))
	var p int
	fmt.Sscan(port, &p)
	startServer(t, p)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if !c.IsConnected() {
			return errors.New("not connected")
		}
		return nil
	})
}

// freeAddr returns a 127.0.0.1 address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestReconnect: clients survive the server shutting down and starting
// again on the same port; subscriptions and services resume.
func TestReconnect(t *testing.T) {
	srv, err := broker.Start(&broker.Options{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	port := srv.Port()
	pub, sub := connect(t, srv.ClientURL()), connect(t, srv.ClientURL())

	ex := bustest.RunExecutor(t)
	var rec bustest.Recorder
	if _, err := sub.Subscribe("/saint/head/state", bus.QoS{Depth: 1000}, ex, rec.Handler); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Serve("/saint/system/status", ex, func(req bus.Msg, reply bus.Reply) { reply("ok", nil) }); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish("/saint/head/state", 1); err != nil {
		t.Fatal(err)
	}
	rec.WaitLen(t, 1)

	srv.Shutdown()
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if pub.IsConnected() || sub.IsConnected() {
			return errors.New("clients still connected")
		}
		return nil
	})
	// Publishing while the server is away is not an error: nats.go buffers.
	if err := pub.Publish("/saint/head/state", 2); err != nil {
		t.Errorf("Publish while disconnected: %v", err)
	}

	startServer(t, port)
	bustest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !pub.IsConnected() || !sub.IsConnected() {
			return errors.New("not reconnected")
		}
		return nil
	})
	// The subscriber may have reconnected after the publisher flushed its
	// buffer, so keep publishing until a message gets through.
	n := rec.Len()
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if err := pub.Publish("/saint/head/state", 3); err != nil {
			return err
		}
		if rec.Len() == n {
			return errors.New("no message since reconnection")
		}
		return nil
	})
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var s string
		if err := pub.Call(ctx, "/saint/system/status", nil, &s); err != nil {
			return err
		}
		if s != "ok" {
			return fmt.Errorf("reply %q", s)
		}
		return nil
	})
}

// TestReplyAfterCallerGone: a reply to a caller that has given up or gone
// is dropped without harm.
func TestReplyAfterCallerGone(t *testing.T) {
	srv := startServer(t, 0)
	pub, sub := connect(t, srv.ClientURL()), connect(t, srv.ClientURL())
	ex := bustest.RunExecutor(t)
	replies := make(chan bus.Reply, 1)
	s, err := sub.Serve("/test/slow", ex, func(req bus.Msg, reply bus.Reply) { replies <- reply })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := pub.Call(ctx, "/test/slow", nil, nil); !errors.Is(err, bus.ErrTimeout) {
		t.Fatalf("Call: %v, want ErrTimeout", err)
	}
	reply := <-replies
	reply("too late", nil)
	pub.Close()
	// The server keeps serving.
	other := connect(t, srv.ClientURL())
	go func() { (<-replies)("fine", nil) }()
	var got string
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := other.Call(ctx, "/test/slow", nil, &got); err != nil || got != "fine" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	if st, _ := bus.SubscriptionStats(s); st.Handled != 2 {
		t.Errorf("stats %+v", st)
	}
}

// BenchmarkPublishDeliver measures a publication's trip through the server
// into a subscriber's queue.
func BenchmarkPublishDeliver(b *testing.B) {
	srv, err := broker.Start(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	pub, err := natsbus.Connect(srv.ClientURL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	sub, err := natsbus.Connect(srv.ClientURL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	s, err := sub.Subscribe("/bench", bus.QoS{Depth: 1}, bustest.RunExecutor(b), func(bus.Msg) {})
	if err != nil {
		b.Fatal(err)
	}
	type state struct {
		Pan, Tilt, Roll float32
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		pub.Publish("/bench", state{1, 2, 3})
	}
	bustest.WaitReceived(b, s, uint64(b.N))
}

func TestNamespaces(t *testing.T) {
	srv := startServer(t, 0)
	bustest.RunNamespaces(t, func(t *testing.T) (pub, sub bus.Bus) {
		return connect(t, srv.ClientURL()), connect(t, srv.ClientURL())
	})
}

// TestConformanceWithServiceConnection: a client serving on a connection
// of its own (Options.ServiceName) behaves as any other.
func TestConformanceWithServiceConnection(t *testing.T) {
	srv := startServer(t, 0)
	bustest.RunConformance(t, func(t *testing.T) (pub, sub bus.Bus) {
		dial := func() bus.Bus {
			c, err := natsbus.Connect(srv.ClientURL(), &natsbus.Options{Name: t.Name(), ServiceName: t.Name() + " services", ReconnectWait: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
		return dial(), dial()
	})
}

// TestRepliesOnlyToInboxes: a request naming a topic as its reply subject
// is served but its answer is not published there; it is counted. A
// request with an inbox is answered.
func TestRepliesOnlyToInboxes(t *testing.T) {
	srv := startServer(t, 0)
	for _, serviceName := range []string{"", "services"} {
		t.Run("service connection "+serviceName, func(t *testing.T) {
			c, err := natsbus.Connect(srv.ClientURL(), &natsbus.Options{Name: "server", ServiceName: serviceName})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ex := executor.New(nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = ex.Run(ctx) }()
			if _, err := bus.ServeJSON(c, "/test/echo", ex, func(req map[string]any, reply func(map[string]any, error)) { reply(req, nil) }); err != nil {
				t.Fatal(err)
			}
			raw, err := nats.Connect(srv.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			topic, err := raw.SubscribeSync("test.estop")
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 50; i++ {
				if err := raw.PublishRequest("_srv.test.echo", "test.estop", []byte(`{"active":false}`)); err != nil {
					t.Fatal(err)
				}
			}
			// Served in order (fewer than the service's queue holds): once
			// this is answered, the 50 were.
			m, err := raw.Request("_srv.test.echo", []byte(`{"n":1}`), 5*time.Second)
			if err != nil || !strings.Contains(string(m.Data), `"n":1`) {
				t.Fatalf("a request with an inbox: %v %v", m, err)
			}
			if err := raw.Flush(); err != nil {
				t.Fatal(err)
			}
			if m, err := topic.NextMsg(10 * time.Millisecond); err == nil {
				t.Errorf("an answer was published on test.estop: %s", m.Data)
			}
			if n := c.RefusedReplies(); n != 50 {
				t.Errorf("%d replies refused, want 50", n)
			}
		})
	}
}
