package limb_test

import (
	"context"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/limb"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/sim/robot"
)

// A control period of the limb reads its actuators' replies, runs the
// motor middleware and sends its CAN commands without allocating: a
// control loop that allocates every period feeds the garbage collector at
// the control rate.
func TestControlDoesNotAllocate(t *testing.T) {
	ex := executor.NewVirtual()
	r, err := robot.New(robot.Options{Exec: ex, Seed: 1, Limbs: []string{"leg_left"}})
	if err != nil {
		t.Fatal(err)
	}
	b := mem.New()
	t.Cleanup(func() { _ = b.Close() })
	role, err := roles.New(msg.RoleLimb)
	if err != nil {
		t.Fatal(err)
	}
	if err := role.Start(rolekit.Env{Exec: ex, Bus: b, Board: r.Board(robot.LimbPart("leg_left")), Config: config(t, "", ""), Prefix: msg.TopicPrefix(msg.RoleLimb, "leg_left")}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(role.Stop)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	if err := ex.RunFor(context.Background(), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	l, ok := role.(*limb.Limb)
	if !ok {
		t.Fatalf("the limb role is a %T", role)
	}
	if allocs := testing.AllocsPerRun(100, l.Control); allocs != 0 {
		t.Errorf("a control period allocates %v times, want 0", allocs)
	}
}
