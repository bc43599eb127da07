package router

import (
	"fmt"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// Inputs at 200 a second do not make RouteStatus go out at that rate: it
// is checked at most every statusCheckEvery, and a change still shows
// within that and one output tick.
func TestRouteStatusRateIsBounded(t *testing.T) {
	rg := newRig(t, fmt.Sprintf(headRoutes, "priority"))
	rg.run(100 * time.Millisecond)
	rg.reset()
	var start time.Time
	rg.do(func() { start = rg.ex.Now() })
	stop := rg.every(5*time.Millisecond, func() Input { return face(map[string]float64{"headYaw": 1}) })
	rg.run(time.Second)
	stop()
	got := rg.got[msg.TopicRouterStatus]
	if len(got) == 0 {
		t.Fatal("no RouteStatus while a route started routing")
	}
	statuses := rg.statuses()
	routingAt := time.Time{}
	for i, s := range statuses {
		if s.State == msg.RouterRouting {
			routingAt = got[i].at
			break
		}
	}
	if routingAt.IsZero() {
		t.Fatalf("no status says routing: %+v", statuses)
	}
	if lag := routingAt.Sub(start); lag > statusCheckEvery+2*rg.r.tick {
		t.Errorf("routing shown %v after the first input, want within %v", lag, statusCheckEvery+2*rg.r.tick)
	}
	for i := 1; i < len(got); i++ {
		if gap := got[i].at.Sub(got[i-1].at); gap < statusCheckEvery {
			t.Errorf("statuses %d and %d %v apart, want at least %v", i-1, i, gap, statusCheckEvery)
		}
	}
}
