package tracks_test

import (
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/tracks"
)

// A control period of the tracks, driving or braking, reads the encoders
// and sets the bridges' PWM without allocating: a control loop that
// allocates every period feeds the garbage collector at the control rate.
func TestControlDoesNotAllocate(t *testing.T) {
	g := newTracksRig(t, nil)
	tr, ok := g.role.(*tracks.Tracks)
	if !ok {
		t.Fatalf("the tracks role is a %T", g.role)
	}
	if allocs := testing.AllocsPerRun(100, tr.Control); allocs != 0 {
		t.Errorf("standing still, a control period allocates %v times, want 0", allocs)
	}
	g.Publish(msg.TopicTracksCmdVel, msg.Twist{Linear: msg.Vector3{X: 0.3}, Angular: msg.Vector3{Z: 0.5}})
	g.Run(300 * time.Millisecond)
	if allocs := testing.AllocsPerRun(100, tr.Control); allocs != 0 {
		t.Errorf("driving, a control period allocates %v times, want 0", allocs)
	}
}
