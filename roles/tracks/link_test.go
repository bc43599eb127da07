package tracks_test

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// driveWithServer sends cmd_vel every 100 ms and the server's heartbeat
// every 50 ms for d.
func (g *tracksRig) driveWithServer(v float64, d time.Duration, seq *uint64) {
	g.T.Helper()
	for i, end := 0, g.now()+d; g.now() < end; i++ {
		if i%2 == 0 {
			g.Publish(msg.TopicTracksCmdVel, msg.Twist{Linear: msg.Vector3{X: v}})
		}
		*seq++
		g.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: *seq})
		g.Run(msg.HeartbeatInterval)
	}
}

// The server falls silent while the base drives at 0.8 m/s (killed, or
// the node cut off: the role sees the same silence): the base is at rest
// within 0.5 s having moved less than 0.25 m, although cmd_timeout_ms
// alone would have let it roll on. When the heartbeat returns it stays
// still, with commands that came before the loss forgotten, until a fresh
// cmd_vel drives it.
func TestTracksStopWhenTheServerLinkIsLost(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	var seq uint64
	g.driveWithServer(0.8, 2*time.Second, &seq)
	if s := g.lastTruth(); math.Abs(s.Speed-0.8) > 0.02 {
		t.Fatalf("driving at %.3f m/s, want 0.8", s.Speed)
	}
	// The last cmd_vel is fresh: the command timeout would keep driving
	// for 500 ms and then ramp down at 1 m/s².
	g.Publish(msg.TopicTracksCmdVel, msg.Twist{Linear: msg.Vector3{X: 0.8}})
	lostAt, x0 := g.now(), g.lastTruth().X
	g.Run(2 * time.Second)

	var restAt time.Duration = -1
	for _, s := range g.truthSince(lostAt) {
		if math.Abs(s.Speed) < 0.01 && math.Abs(s.TrackSpeed[0]) < 0.01 && math.Abs(s.TrackSpeed[1]) < 0.01 {
			if restAt < 0 {
				restAt = s.t - lostAt
			}
		} else {
			restAt = -1
		}
	}
	moved := g.lastTruth().X - x0
	t.Logf("link lost: at rest after %v, moved %.3f m", restAt, moved)
	if restAt < 0 || restAt > 500*time.Millisecond {
		t.Errorf("at rest %v after the server fell silent, want within 500 ms", restAt)
	}
	if moved >= 0.25 {
		t.Errorf("moved %.3f m after the server fell silent, want < 0.25 m", moved)
	}
	if st := g.lastState(); st.MotorsEnabled {
		t.Errorf("TrackState %+v with the link lost, want motors disabled", st)
	}

	// The server is back, and nothing is commanded: the base stays still.
	x1 := g.lastTruth().X
	for range 20 {
		seq++
		g.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: seq})
		g.Run(msg.HeartbeatInterval)
	}
	if s := g.lastTruth(); math.Abs(s.X-x1) > 0.005 || math.Abs(s.Speed) > 0.01 {
		t.Errorf("with the link back and no fresh command the base moved %.3f m, at %.3f m/s", s.X-x1, s.Speed)
	}
	if st := g.lastState(); !st.MotorsEnabled {
		t.Errorf("TrackState %+v with the link back, want motors enabled", st)
	}
	// A fresh command drives again.
	g.driveWithServer(0.3, time.Second, &seq)
	if s := g.lastTruth(); s.Speed < 0.25 {
		t.Errorf("a fresh cmd_vel after the link returned: %.3f m/s, want about 0.3", s.Speed)
	}
}
