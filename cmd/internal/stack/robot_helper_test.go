package stack

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
)

// testRobot says which simulated robot startRobot brings up.
type testRobot struct {
	// Type is the robot type bringup.Resolve reads from the fixtures'
	// configuration.
	Type string
	// RobotID puts the robot in the namespace /robot_{id}; empty is none.
	RobotID string
	// Adopt lists the nodes adopted; nil adopts every node.
	Adopt []string
	// WaitActive lists the nodes waited for; nil means those adopted.
	WaitActive []string
	// BeforeStart, when set, sees the stack before it starts (to tap the
	// broker from the first message on).
	BeforeStart func(*Stack)
}

// startRobot brings a robot type up whole, as saint-sim --robot-type T
// --adopt does: it writes the fixtures' configuration, resolves the type,
// starts the stack on a running executor, adopts the nodes, then stops
// the executor and runs virtual time (with the returned run) until the
// nodes waited for are active. The stack shuts down when the test ends.
func startRobot(t *testing.T, r testRobot) (*Stack, *bringup.Robot, func(time.Duration)) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := fixtures.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	robot, err := bringup.Resolve(os.DirFS(cfg), r.Type)
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Options{ConfigDir: cfg, DataDir: filepath.Join(dir, "data"), HTTPAddr: "127.0.0.1:0", WSAddr: "127.0.0.1:0",
		Seed: 1, Robot: robot, RobotID: r.RobotID})
	if err != nil {
		t.Fatal(err)
	}
	if r.BeforeStart != nil {
		r.BeforeStart(st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Exec.Run(ctx) }()
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, st)
	var adoptErr error
	if err := st.Exec.Do(ctx, func() { adoptErr = st.AdoptAll(r.Adopt) }); err != nil {
		t.Fatal(err)
	}
	if adoptErr != nil {
		t.Fatal(adoptErr)
	}
	cancel()
	<-done
	run := func(d time.Duration) {
		t.Helper()
		if err := st.Exec.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	wait := r.WaitActive
	if wait == nil {
		wait = r.Adopt
	}
	var waited []int
	for i, sn := range st.Specs {
		if wait == nil {
			waited = append(waited, i)
			continue
		}
		for _, id := range wait {
			if sn.ID == id {
				waited = append(waited, i)
			}
		}
	}
	active := func() bool {
		for _, i := range waited {
			if st.Nodes[i].State() != msg.StateActive {
				return false
			}
		}
		return true
	}
	for range 100 {
		if active() {
			break
		}
		run(100 * time.Millisecond)
	}
	for _, i := range waited {
		if n := st.Nodes[i]; n.State() != msg.StateActive {
			t.Fatalf("%s is %s: %s", st.Specs[i].ID, n.State(), st.AdoptionError(st.Specs[i].ID))
		}
	}
	return st, robot, run
}

// shutdownAtEnd shuts st down when the test ends, running its executor
// meanwhile (a held or stopped one would not carry the shutdown out).
func shutdownAtEnd(tb testing.TB, st *Stack) {
	tb.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- st.Exec.Run(ctx) }()
		st.Shutdown()
		cancel()
		<-done
	})
}
