package rolekit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
)

// The link is lost once the heartbeat has been silent for longer than the
// timeout (not before the first heartbeat), Lost runs once, and the next
// heartbeat restores it.
func TestLinkLostAfterSilenceAndRestored(t *testing.T) {
	env, _ := kitEnv(t)
	ex, b := env.Exec, env.Bus
	var k rolekit.Kit
	var events []string
	var link *rolekit.Link
	start := ex.Now()
	at := func() time.Duration { return ex.Now().Sub(start) }
	ex.Post(func() {
		if err := k.Begin(env, func() error { return nil }); err != nil {
			t.Error(err)
			return
		}
		var err error
		link, err = k.WatchLink(200*time.Millisecond,
			func() { events = append(events, "lost@"+at().String()) },
			func() { events = append(events, "restored@"+at().String()) })
		if err != nil {
			t.Error(err)
		}
	})
	run := func(d time.Duration) {
		t.Helper()
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	beat := func(d time.Duration) {
		for end := at() + d; at() < end; {
			if err := b.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: 1}); err != nil {
				t.Fatal(err)
			}
			run(msg.HeartbeatInterval)
		}
	}
	run(time.Second) // no heartbeat yet: nothing watched
	if len(events) != 0 || link.Lost() {
		t.Fatalf("before any heartbeat: %v", events)
	}
	beat(time.Second)
	if len(events) != 0 {
		t.Fatalf("with heartbeats: %v", events)
	}
	// beat ran one interval after its last heartbeat.
	lastBeat := at() - msg.HeartbeatInterval
	run(time.Second)
	if len(events) != 1 || !strings.HasPrefix(events[0], "lost@") || !link.Lost() {
		t.Fatalf("after 1 s of silence: %v, lost %v", events, link.Lost())
	}
	lostAt, err := time.ParseDuration(strings.TrimPrefix(events[0], "lost@"))
	if err != nil {
		t.Fatal(err)
	}
	if late := lostAt - lastBeat; late <= 200*time.Millisecond || late > 225*time.Millisecond {
		t.Errorf("lost %v after the last heartbeat, want after the 200 ms timeout and within an eighth of it", late)
	}
	beat(100 * time.Millisecond)
	if len(events) != 2 || !strings.HasPrefix(events[1], "restored@") || link.Lost() || link.Losses() != 1 {
		t.Fatalf("heartbeat back: %v, lost %v, losses %d", events, link.Lost(), link.Losses())
	}
	ex.Post(k.StopAll)
	run(time.Second)
	if len(events) != 2 {
		t.Errorf("after StopAll: %v", events)
	}
}

func TestLinkTimeoutBounds(t *testing.T) {
	cfg, err := roleconfig.ParseFile("t.yaml", []byte("role: head\nversion: \"1\"\nlink_timeout_ms: 20\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ms   float64
		want time.Duration
		ok   bool
	}{{0, msg.DefaultLinkTimeout, true}, {150, 150 * time.Millisecond, true}, {20, 0, false}, {-1, 0, false}, {60000, 0, false}} {
		d, err := rolekit.LinkTimeout(cfg, c.ms)
		if (err == nil) != c.ok || d != c.want {
			t.Errorf("LinkTimeout(%v) = %v, %v; want %v, ok %v", c.ms, d, err, c.want, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "link_timeout_ms") {
			t.Errorf("error %q does not name the field", err)
		}
	}
}
