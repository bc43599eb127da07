package arms_test

import (
	"runtime"
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

// A control period on a servo bus sends its goals (and any changed torque
// limits) as Feetech sync writes; building and sending them allocates
// nothing once the first period ran. On CAN the period's commands go out
// through the actuators' frames, also without allocating. Measured between
// two polls, when the bus is free, as the role's own write runs.
//
// The one allocation allowed on the servo bus is the simulated wire's:
// the twin's end of the pipe gets its own copy of each packet
// (uarttest.Port.Inject), one goal packet a period in the middle of a move
// with the torque limits unchanged. A serial port on the robot copies
// nothing.
func TestWriteDoesNotAllocate(t *testing.T) {
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
			r.Publish(msg.ArmCmdTopic(msg.ArmLeft), msg.ArmCommand{TargetPositions: []float32{30, 0, -20}, SpeedFactor: 1})
			r.Run(300 * time.Millisecond)
			for i := 0; a.Polling(); i++ {
				if i == 1000 {
					t.Fatal("the servos are polled without pause")
				}
				r.Run(100 * time.Microsecond)
			}
			want := 1.0 // the simulated wire's copy of the goal packet
			if onCAN {
				want = 0
			}
			a.Write(a.Follow())
			if allocs := testing.AllocsPerRun(100, func() { a.Write(a.Follow()) }); allocs != want {
				t.Errorf("writing a control period's outputs allocates %v times, want %v", allocs, want)
			}
			if allocs := testing.AllocsPerRun(100, a.Control); allocs != want {
				t.Errorf("a whole control period (middleware, follow, write) allocates %v times, want %v", allocs, want)
			}
			// The role still drives the arm after all those writes.
			r.Run(300 * time.Millisecond)
			if st := r.lastState(); st.ErrorState {
				t.Fatalf("after the measured writes: error %q", st.ErrorMessage)
			}
		})
	}
}

// Polling the servos, the start of every control period on the servo
// bus, allocates nothing in the role or the bus driver once the first
// round ran: the answers' callbacks are made at start and the bus reuses
// its read transactions. What a poll does allocate is the simulated
// wire's, 3 for the request put on the line (uarttest.Port.Inject's copy
// and the servo twins' reception, seen with -memprofile); a serial port
// on the robot copies nothing. Before, 24 more (4 per servo). Each poll
// is measured alone, the executor run between them to answer it (a poll
// while one is on the bus does nothing, so testing.AllocsPerRun, which
// calls twice, cannot measure it).
func TestPollDoesNotAllocate(t *testing.T) {
	r := newArmRigOn(t, false)
	a, ok := r.role.(*arms.Arms)
	if !ok {
		t.Fatalf("the arms role is a %T", r.role)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r.Run(300 * time.Millisecond)
	var ms runtime.MemStats
	total := uint64(0)
	for round := 0; round < 20; round++ {
		for i := 0; a.Polling(); i++ {
			if i == 1000 {
				t.Fatal("the servos' answers never came")
			}
			r.Run(50 * time.Microsecond)
		}
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		a.Poll()
		runtime.ReadMemStats(&ms)
		if !a.Polling() {
			t.Fatal("Poll put nothing on the bus")
		}
		total += ms.Mallocs - before
	}
	if want := uint64(20 * 3); total != want {
		t.Errorf("20 polls allocated %d times, want %d (the simulated wire's)", total, want)
	}
}
