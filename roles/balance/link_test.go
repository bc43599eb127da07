package balance_test

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// heartbeat publishes the server's heartbeat every 50 ms until stopped.
func (g *balanceRig) heartbeat() *executor.Timer {
	var seq uint64
	return g.Ex.Every(msg.HeartbeatInterval, func() {
		seq++
		_ = g.Bus.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: seq})
	})
}

// Driving on the stick, the server falls silent: the base stops driving
// and keeps balancing, armed and upright; when the heartbeat returns the
// stick (a fresh command every frame) drives it again.
func TestBalanceStopsDrivingButKeepsBalancingWhenTheServerLinkIsLost(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	for _, p := range []string{"speed_limit 20", "speed_limit 30"} {
		if r := g.console(p); !r.OK {
			t.Fatalf("%s: %+v", p, r)
		}
	}
	hb := g.heartbeat()
	for ch, us := range map[int]uint16{7: 2000, 2: 2000} {
		if err := g.io.SetChannel(ch, us); err != nil {
			t.Fatal(err)
		}
	}
	g.Run(4 * time.Second)
	if _, v := g.robot.Balance.Position(); v < 0.3 {
		t.Fatalf("driving on the stick at %.3f m/s, want about 0.6", v)
	}
	hb.Stop()
	maxTilt, _ := g.track(3 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v) > 0.05 {
		t.Errorf("%.3f m/s 3 s after the server fell silent, want standing", v)
	}
	if !g.state.Armed || maxTilt > 20 {
		t.Errorf("link lost: armed %v, max tilt %.1f°; want balancing", g.state.Armed, maxTilt)
	}
	hb = g.heartbeat()
	defer hb.Stop()
	g.Run(3 * time.Second)
	if _, v := g.robot.Balance.Position(); v < 0.3 {
		t.Errorf("link back, stick still full: %.3f m/s, want driving again", v)
	}
}
