package rolekit

import (
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roleconfig"
)

// LinkTimeout checks a role's link_timeout_ms (0 means
// msg.DefaultLinkTimeout) against msg.MinLinkTimeout..MaxLinkTimeout; an
// error names the field and its line.
func LinkTimeout(cfg *roleconfig.Config, ms float64) (time.Duration, error) {
	if ms == 0 {
		return msg.DefaultLinkTimeout, nil
	}
	return cfg.DurationMS("link_timeout_ms", ms, float64(msg.MinLinkTimeout.Milliseconds()), float64(msg.MaxLinkTimeout.Milliseconds()))
}

// Link watches the server's heartbeat (msg.TopicServerHeartbeat) for a
// motor role. Once it has heard the server, a silence longer than the
// timeout — the server died, the bus broke, or this node was cut off — is a
// lost link: Lost runs once, on the role's executor, and the role stops its
// actuators as its emergency stop does. The next heartbeat runs Restored;
// the role stays stopped until a fresh command comes. Before the first
// heartbeat nothing is watched (a role tested on its own, or a node whose
// server is older, keeps working).
//
// Time is the executor's clock, so in simulation the watch is as
// deterministic as the rest.
type Link struct {
	kit     *Kit
	timeout time.Duration
	lost    func()
	back    func()

	heard  bool
	last   time.Time
	isLost bool
	losses int
}

// WatchLink starts watching the server's heartbeat until StopAll; lost and
// restored run on the role's executor (either may be nil).
func (k *Kit) WatchLink(timeout time.Duration, lost, restored func()) (*Link, error) {
	l := &Link{kit: k, timeout: timeout, lost: lost, back: restored}
	// Depth 1: only the newest heartbeat matters.
	if err := Subscribe(k, msg.TopicServerHeartbeat, bus.QoS{Depth: 1}, l.heartbeat); err != nil {
		return nil, err
	}
	// Checked at an eighth of the timeout: a loss is seen at most an
	// eighth late (25 ms by default, 2 cm at 0.8 m/s).
	k.Every(timeout/8, l.check)
	return l, nil
}

func (l *Link) heartbeat(msg.ServerHeartbeat) {
	l.heard, l.last = true, l.kit.Env.Exec.Now()
	if l.isLost {
		l.isLost = false
		l.kit.Env.Log.Warn("server link restored; actuators stay stopped until a fresh command")
		if l.back != nil {
			l.back()
		}
	}
}

func (l *Link) check() {
	if !l.heard || l.isLost {
		return
	}
	if silent := l.kit.Env.Exec.Now().Sub(l.last); silent > l.timeout {
		l.isLost = true
		l.losses++
		l.kit.Env.Log.Error("server link lost: stopping actuators", "silent", silent, "link_timeout", l.timeout)
		if l.lost != nil {
			l.lost()
		}
	}
}

// Lost reports whether the link is lost now.
func (l *Link) Lost() bool { return l.isLost }

// Losses counts the link losses since the role started.
func (l *Link) Losses() int { return l.losses }
