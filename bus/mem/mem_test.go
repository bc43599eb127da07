package mem_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
)

func newPair(t *testing.T) (pub, sub bus.Bus) {
	br := mem.NewBroker()
	p, s := br.Connect(nil), br.Connect(nil)
	t.Cleanup(func() {
		p.Close()
		s.Close()
	})
	return p, s
}

func TestConformance(t *testing.T) {
	bustest.RunConformance(t, newPair)
}

// scenario runs a small robot on one virtual-clock executor: a periodic
// publisher, a wildcard subscriber, a service that answers after a delay,
// a service that never answers and a call to nobody. It returns the event
// log with virtual timestamps.
func scenario(t *testing.T) string {
	ex := executor.NewVirtual()
	start := ex.Now()
	br := mem.NewBroker()
	server, node := br.Connect(nil), br.Connect(nil)
	defer server.Close()
	defer node.Close()

	var log strings.Builder
	logf := func(format string, args ...any) {
		fmt.Fprintf(&log, "t=%dus ", ex.Now().Sub(start).Microseconds())
		fmt.Fprintf(&log, format, args...)
		log.WriteByte('\n')
	}
	must := func(_ bus.Subscription, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}

	must(server.Subscribe("/saint/nodes/+/status", bus.QoS{Depth: 3}, ex, func(m bus.Msg) {
		logf("status %s %s", m.Topic, m.Data)
	}))
	must(server.Serve("/saint/nodes/adopt", ex, func(req bus.Msg, reply bus.Reply) {
		logf("adopt request %s", req.Data)
		ex.After(3*time.Millisecond, func() { reply(map[string]bool{"success": true}, nil) })
	}))
	must(server.Serve("/saint/system/status", ex, func(req bus.Msg, reply bus.Reply) {
		logf("status request, not answering")
	}))

	n := 0
	ex.Every(10*time.Millisecond, func() {
		n++
		node.Publish("/saint/nodes/n1/status", n)
		node.Publish("/saint/nodes/n2/status", -n)
		if n%4 == 0 {
			node.CallAsync("/saint/nodes/adopt", n, 50*time.Millisecond, ex, func(m bus.Msg, err error) {
				logf("adopt done %s %v", m.Data, err)
			})
		}
	})
	ex.After(15*time.Millisecond, func() {
		node.CallAsync("/saint/system/status", nil, 7*time.Millisecond, ex, func(m bus.Msg, err error) {
			logf("system status done %v", err)
		})
		node.CallAsync("/saint/nobody", nil, time.Second, ex, func(m bus.Msg, err error) {
			logf("nobody done %v", err)
		})
	})
	// A burst larger than the subscriber's depth: the oldest are dropped.
	ex.After(55*time.Millisecond, func() {
		for i := 100; i < 106; i++ {
			node.Publish("/saint/nodes/burst/status", i)
		}
	})
	if err := ex.RunFor(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return log.String()
}

func TestDeterministic(t *testing.T) {
	a, b := scenario(t), scenario(t)
	if a != b {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a, b)
	}
	for _, want := range []string{
		"t=10000us status /saint/nodes/n1/status 1\nt=10000us status /saint/nodes/n2/status -1\n",
		"t=15000us status request, not answering\nt=15000us nobody done bus: no responders: /saint/nobody\n",
		"t=22000us system status done bus: timeout: /saint/system/status\n",
		"t=40000us adopt request 4\n",
		"t=43000us adopt done {\"success\":true} <nil>\n",
		"t=55000us status /saint/nodes/burst/status 103\nt=55000us status /saint/nodes/burst/status 104\nt=55000us status /saint/nodes/burst/status 105\nt=60000us",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("log lacks %q:\n%s", want, a)
		}
	}
}

// TestPublishOrderAcrossTopics: a callback's publications to different
// topics are handled in publish order when the subscriber is idle.
func TestPublishOrderAcrossTopics(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	var got []string
	for _, topic := range []string{"/a", "/b", "/c"} {
		if _, err := b.Subscribe(topic, bus.QoS{}, ex, func(m bus.Msg) { got = append(got, m.Topic) }); err != nil {
			t.Fatal(err)
		}
	}
	ex.Post(func() {
		b.Publish("/c", 0)
		b.Publish("/a", 0)
		b.Publish("/b", 0)
	})
	if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/c", "/a", "/b"}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
}

// TestBacklogInterleaves: a backlog on one subscription does not hold the
// executor: other events run between its messages.
func TestBacklogInterleaves(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	var got []string
	b.Subscribe("/flood", bus.QoS{Depth: 10}, ex, func(m bus.Msg) { got = append(got, "flood"+string(m.Data)) })
	b.Subscribe("/other", bus.QoS{}, ex, func(m bus.Msg) { got = append(got, "other") })
	for i := 0; i < 3; i++ {
		b.Publish("/flood", i)
	}
	b.Publish("/other", 0)
	if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := []string{"flood0", "other", "flood1", "flood2"}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
}

// TestCallAsyncVirtualTimeout: the timeout fires at exactly the virtual
// deadline, whichever of reply and timeout comes first wins, and at equal
// deadlines the timer armed first (the timeout, armed when the call was
// made) wins.
func TestCallAsyncVirtualTimeout(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	replyAfter := func(d time.Duration) bus.ServiceHandler {
		return func(req bus.Msg, reply bus.Reply) {
			ex.After(d, func() { reply(d.String(), nil) })
		}
	}
	b.Serve("/slow", ex, replyAfter(20*time.Millisecond))
	b.Serve("/edge", ex, replyAfter(10*time.Millisecond))
	b.Serve("/fast", ex, replyAfter(9*time.Millisecond))
	start := ex.Now()
	var got []string
	for _, svc := range []string{"/slow", "/edge", "/fast"} {
		b.CallAsync(svc, nil, 10*time.Millisecond, ex, func(m bus.Msg, err error) {
			got = append(got, fmt.Sprintf("%s@%v:%s/%v", svc, ex.Now().Sub(start), m.Data, errors.Is(err, bus.ErrTimeout)))
		})
	}
	if err := ex.RunFor(context.Background(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	want := []string{`/fast@9ms:"9ms"/false`, "/slow@10ms:/true", "/edge@10ms:/true"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestServiceBusy: requests beyond the service depth are refused at once.
func TestServiceBusy(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	server := br.Connect(&bus.Options{ServiceDepth: 2})
	client := br.Connect(nil)
	defer server.Close()
	defer client.Close()
	server.Serve("/svc", ex, func(req bus.Msg, reply bus.Reply) { reply("ok", nil) })
	var got []string
	for i := 0; i < 3; i++ {
		client.CallAsync("/svc", i, time.Second, ex, func(m bus.Msg, err error) {
			var re *bus.RemoteError
			if errors.As(err, &re) {
				got = append(got, "refused")
				return
			}
			got = append(got, string(m.Data))
		})
	}
	if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := []string{"refused", `"ok"`, `"ok"`}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestCloseOneConnection: closing a connection removes its services and
// subscriptions but leaves the broker's other connections working.
func TestCloseOneConnection(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	a, b, c := br.Connect(nil), br.Connect(nil), br.Connect(nil)
	defer c.Close()
	var got []string
	a.Serve("/svc", ex, func(req bus.Msg, reply bus.Reply) { reply("a", nil) })
	a.Subscribe("/t", bus.QoS{}, ex, func(bus.Msg) { got = append(got, "a") })
	b.Subscribe("/t", bus.QoS{}, ex, func(bus.Msg) { got = append(got, "b") })
	a.Close()
	c.Publish("/t", 1)
	c.CallAsync("/svc", nil, time.Second, ex, func(m bus.Msg, err error) { got = append(got, fmt.Sprint(errors.Is(err, bus.ErrNoResponders))) })
	if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "true"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	b.Close()
}

func TestWildcardMatching(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	filters := []string{"/a/+", "/a/#", "/a/+/c", "/+x", "/a/b"}
	got := map[string][]string{}
	for _, f := range filters {
		f := f
		if _, err := b.Subscribe(f, bus.QoS{Depth: 100}, ex, func(m bus.Msg) { got[f] = append(got[f], m.Topic) }); err != nil && f != "/+x" {
			t.Fatal(err)
		}
	}
	for _, topic := range []string{"/a", "/a/b", "/a/b/c", "/a/x/c", "/a/b/c/d", "/b/b"} {
		b.Publish(topic, 0)
	}
	if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"/a/+":   {"/a/b"},
		"/a/#":   {"/a/b", "/a/b/c", "/a/x/c", "/a/b/c/d"},
		"/a/+/c": {"/a/b/c", "/a/x/c"},
		"/a/b":   {"/a/b"},
	}
	for f, w := range want {
		if !slices.Equal(got[f], w) {
			t.Errorf("%s got %v, want %v", f, got[f], w)
		}
	}
	if len(got["/+x"]) != 0 {
		t.Errorf("invalid filter delivered %v", got["/+x"])
	}
}

func BenchmarkPublish(b *testing.B) {
	for _, subs := range []int{1, 10} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			ex := executor.NewVirtual()
			bb := mem.New()
			defer bb.Close()
			for i := 0; i < subs; i++ {
				bb.Subscribe("/saint/head/state", bus.QoS{Depth: 1}, ex, func(bus.Msg) {})
			}
			type state struct {
				Pan, Tilt, Roll float32
			}
			b.ReportAllocs()
			for b.Loop() {
				bb.Publish("/saint/head/state", state{1, 2, 3})
			}
		})
	}
}
