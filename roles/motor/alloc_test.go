package motor

import (
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// Update, run by every role's control period, allocates nothing: not
// while nobody drives the joints, not while a session's client does. A
// control loop that allocates every period feeds the garbage collector
// at the control rate.
func TestUpdateDoesNotAllocate(t *testing.T) {
	r := newRig(t, nil)
	if allocs := testing.AllocsPerRun(100, func() { r.mw.Update(r.fb) }); allocs != 0 {
		t.Errorf("without a session, Update allocates %v times, want 0", allocs)
	}
	a, _ := call[msg.RequestControlResponse](r, msg.MotorRequestControl, msg.RequestControlRequest{Client: "a", TimeoutMS: 10000})
	for _, c := range []msg.ControlCommand{
		{Mode: msg.ModePosition, Positions: []float64{0.5, 1}, Velocities: []float64{0, 0.3}},
		{Mode: msg.ModeTorque, MotorIDs: []int{4}, Torques: []float64{1}},
	} {
		c.UUID = a.UUID
		if err := r.bus.Publish("/robot_7/saint/arms/left/control_command", c); err != nil {
			t.Fatal(err)
		}
		r.run(40 * time.Millisecond)
		if !r.owns {
			t.Fatalf("%s: the session's client does not own the joints", c.Mode)
		}
		if allocs := testing.AllocsPerRun(100, func() { r.mw.Update(r.fb) }); allocs != 0 {
			t.Errorf("%s: Update allocates %v times, want 0", c.Mode, allocs)
		}
	}
}
