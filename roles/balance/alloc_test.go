package balance_test

import (
	"testing"
	"time"

	"github.com/saint-os/saint/roles/balance"
)

// The balancing loop, armed and holding the robot upright, reads the IMU
// and sends its VESC frames without allocating: a 1 kHz loop that
// allocates feeds the garbage collector a thousand times a second.
func TestLoopDoesNotAllocate(t *testing.T) {
	g := newBalanceRig(t, nil)
	b, ok := g.role.(*balance.Balance)
	if !ok {
		t.Fatalf("the balance role is a %T", g.role)
	}
	if allocs := testing.AllocsPerRun(100, b.Loop); allocs != 0 {
		t.Errorf("disarmed, a loop period allocates %v times, want 0", allocs)
	}
	g.mustArm()
	g.Run(500 * time.Millisecond)
	if !g.state.Armed {
		t.Fatalf("not armed: state %q", g.state.State)
	}
	if allocs := testing.AllocsPerRun(100, b.Loop); allocs != 0 {
		t.Errorf("armed, a loop period allocates %v times, want 0", allocs)
	}
}
