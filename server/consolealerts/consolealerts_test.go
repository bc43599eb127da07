package consolealerts

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// console is what reaches the console's topic.
type console struct {
	ex  *executor.Executor
	got []msg.ConsoleAlert
}

func newConsole(t *testing.T, b bus.Bus) *console {
	c := &console{ex: executor.NewVirtual()}
	if _, err := bus.SubscribeJSON(b, msg.TopicConsoleAlerts, bus.QoS{Reliability: bus.Reliable, Depth: 100}, c.ex, func(_ string, a msg.ConsoleAlert) {
		c.got = append(c.got, a)
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// drain runs what was delivered and returns it.
func (c *console) drain(t *testing.T) []msg.ConsoleAlert {
	if err := c.ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	got := c.got
	c.got = nil
	return got
}

func TestRelayNamesTheNodeAndBoundsWhatItShows(t *testing.T) {
	b := mem.New()
	con := newConsole(t, b)
	now := time.Unix(1_800_000_000, 0)
	r := New(b, slog.New(slog.DiscardHandler), func() time.Time { return now })

	// Whatever the node writes as its source, the console sees the node.
	for _, forged := range []string{"server", "safety", "head-1", ""} {
		if !r.FromNode("tracks-1", msg.ConsoleAlert{Level: msg.AlertCritical, Message: "battery cutoff", Source: forged, Timestamp: 12.5}) {
			t.Fatalf("alert claiming %q not relayed", forged)
		}
	}
	got := con.drain(t)
	if len(got) != 4 {
		t.Fatalf("%d alerts at the console, want 4", len(got))
	}
	for _, a := range got {
		if a.Source != "tracks-1" || a.Level != msg.AlertCritical || a.Message != "battery cutoff" || a.Timestamp != 12.5 {
			t.Errorf("relayed %+v, want the node's alert with source tracks-1", a)
		}
	}

	// An unknown level is a warning, a long message is cut on a rune
	// boundary, a missing time is the server's.
	long := strings.Repeat("é", MaxMessage)
	r.FromNode("head-1", msg.ConsoleAlert{Level: "panic", Message: long})
	got = con.drain(t)
	if len(got) != 1 || got[0].Level != msg.AlertWarning || got[0].Source != "head-1" ||
		len(got[0].Message) > MaxMessage || !utf8.ValidString(got[0].Message) || !strings.HasPrefix(long, got[0].Message) ||
		got[0].Timestamp != float64(now.Unix()) {
		t.Fatalf("relayed %+v (%d bytes), want a warning cut to %d bytes at the server's time", got, len(got[0].Message), MaxMessage)
	}

	// tracks-1 used 4 of its Burst this window: one more, then dropped,
	// while another node still gets through.
	if !r.FromNode("tracks-1", msg.ConsoleAlert{Level: msg.AlertInfo, Message: "5"}) {
		t.Fatal("the node's fifth alert in a window dropped")
	}
	for i := 0; i < 10; i++ {
		if r.FromNode("tracks-1", msg.ConsoleAlert{Level: msg.AlertInfo, Message: "flood"}) {
			t.Fatalf("alert %d over the burst relayed", i+1)
		}
	}
	if !r.FromNode("head-1", msg.ConsoleAlert{Level: msg.AlertInfo, Message: "other"}) {
		t.Fatal("another node's alert dropped")
	}
	if got := con.drain(t); len(got) != 2 {
		t.Fatalf("%d alerts at the console, want 2: %+v", len(got), got)
	}
	now = now.Add(Window)
	if !r.FromNode("tracks-1", msg.ConsoleAlert{Level: msg.AlertInfo, Message: "next window"}) {
		t.Fatal("the node's alert in the next window dropped")
	}
	// Not a node id: nothing relayed.
	if r.FromNode("a.b", msg.ConsoleAlert{Message: "x"}) || r.FromNode("", msg.ConsoleAlert{Message: "x"}) {
		t.Error("an alert of an invalid node id relayed")
	}
	if got := con.drain(t); len(got) != 1 || got[0].Message != "next window" {
		t.Fatalf("at the console %+v, want the next window's alert only", got)
	}
}
