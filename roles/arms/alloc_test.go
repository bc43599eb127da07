package arms_test

import (
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/arms"
)

// A control period of the role's own driving allocates nothing: follow
// returns one slice made at start, holding or in the middle of a move, on
// servos or on CAN actuators. A control loop that allocates every period
// feeds the garbage collector at the control rate.
func TestFollowDoesNotAllocate(t *testing.T) {
	for _, onCAN := range []bool{false, true} {
		name := "servos"
		if onCAN {
			name = "can"
		}
		t.Run(name, func(t *testing.T) {
			r := newArmRigOn(t, onCAN)
			a, ok := r.role.(*arms.Arms)
			if !ok {
				t.Fatalf("the arms role is a %T", r.role)
			}
			n := len(r.lastState().JointPositions)
			check := func(what string) {
				t.Helper()
				first := a.Follow()
				if len(first) != n {
					t.Fatalf("%s: follow returned %d outputs, want one per joint (%d)", what, len(first), n)
				}
				for i, o := range first {
					if !o.Torque {
						t.Errorf("%s: joint %d without torque, want it driven", what, i)
					}
				}
				if allocs := testing.AllocsPerRun(100, func() { a.Follow() }); allocs != 0 {
					t.Errorf("%s: follow allocates %v times a control period, want 0", what, allocs)
				}
				if again := a.Follow(); &again[0] != &first[0] {
					t.Errorf("%s: follow returned a new slice, want the one made at start", what)
				}
			}
			check("holding")
			r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{30, 0, -20}, SpeedFactor: 1})
			r.Run(300 * time.Millisecond)
			if st := r.lastState(); !st.InMotion || st.ErrorState {
				t.Fatalf("300 ms into a move: in_motion %v, error %q", st.InMotion, st.ErrorMessage)
			}
			check("moving")
		})
	}
}
