package head_test

import (
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/head"
)

// A control period of the head, in the middle of a move, sets its servo
// pulses on the PCA9685 without allocating: a control loop that allocates
// every period feeds the garbage collector at the control rate.
func TestControlDoesNotAllocate(t *testing.T) {
	g := newHeadRig(t, nil)
	h, ok := g.role.(*head.Head)
	if !ok {
		t.Fatalf("the head role is a %T", g.role)
	}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 100, Tilt: -60, Roll: 10, Speed: 0.2})
	g.Run(200 * time.Millisecond)
	if allocs := testing.AllocsPerRun(100, func() { h.Control(0.001) }); allocs != 0 {
		t.Errorf("a control period allocates %v times, want 0", allocs)
	}
}
