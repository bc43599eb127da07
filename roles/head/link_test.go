package head_test

import (
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// The server's heartbeat stops in the middle of a long pan: the head
// brakes and holds where it stopped, short of the goal; commands while the
// link is lost do not move it; with the link back a fresh command does.
func TestHeadHoldsWhenTheServerLinkIsLost(t *testing.T) {
	g := newHeadRig(t, nil)
	pan := headServos[0]
	var seq uint64
	beat := func(d time.Duration) {
		for end := g.Ex.Now().Add(d); g.Ex.Now().Before(end); {
			seq++
			g.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: seq})
			g.Run(msg.HeartbeatInterval)
		}
	}
	beat(200 * time.Millisecond)
	// 170° at 180°/s takes about 1.2 s.
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 170, Speed: 1})
	beat(300 * time.Millisecond)
	g.Run(time.Second) // silent: lost after 200 ms, then braking
	held, ok := g.servoAngle(pan)
	if !ok || held > 150 || held < 20 {
		t.Fatalf("pan at %.1f° (pulse on %v) 1.3 s into a 170° move with the link lost after 0.3 s, want held well short of it", held, ok)
	}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: -90, Speed: 1})
	g.Run(time.Second)
	if a, _ := g.servoAngle(pan); a != held {
		t.Errorf("a command with the link lost moved the pan from %.1f° to %.1f°", held, a)
	}
	beat(500 * time.Millisecond)
	if a, _ := g.servoAngle(pan); a != held {
		t.Errorf("the link came back and the pan moved from %.1f° to %.1f° without a fresh command", held, a)
	}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 0, Speed: 1})
	beat(1500 * time.Millisecond)
	if a, _ := g.servoAngle(pan); a > 0.5 || a < -0.5 {
		t.Errorf("a fresh command with the link back: pan at %.1f°, want 0", a)
	}
}
