package stack

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
)

// Two whole simulated robots, robot_1 and robot_2, on one broker: each
// server adopts its own head node only, a head command in one robot's
// namespace moves that robot's head only, and nothing of either robot is
// visible outside its namespace.
func TestTwoRobotsOneBroker(t *testing.T) {
	br := mem.NewBroker()
	testTwoRobots(t, executor.NewVirtual(), func() bus.Bus { return br.Connect(nil) })
}

// The same on one real NATS broker (nats-server on 127.0.0.1, every
// process a nats.go client), in real time.
func TestTwoRobotsOneNATSBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two robots in real time")
	}
	srv, err := broker.Start(&broker.Options{Host: "127.0.0.1", Port: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	testTwoRobots(t, executor.New(nil), func() bus.Bus {
		c, err := natsbus.Connect(srv.ClientURL(), &natsbus.Options{Name: t.Name()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	})
}

func testTwoRobots(t *testing.T, ex *executor.Executor, dial func() bus.Bus) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := fixtures.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	outside := dial()
	var leaked []string
	if _, err := outside.Subscribe("/saint/#", bus.QoS{Depth: 1000}, ex, func(m bus.Msg) { leaked = append(leaked, m.Topic) }); err != nil {
		t.Fatal(err)
	}
	var stacks []*Stack
	for _, id := range []string{"1", "2"} {
		st, err := New(Options{Exec: ex, Dial: dial, RobotID: id, ConfigDir: cfg, DataDir: filepath.Join(dir, "data"+id),
			HTTPAddr: "127.0.0.1:0", WSAddr: "127.0.0.1:0", Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		stacks = append(stacks, st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	for _, st := range stacks {
		if err := st.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ex.Run(ctx) }()
		for _, st := range stacks {
			st.Shutdown()
		}
		cancel()
		<-done
	})
	for _, st := range stacks {
		var adoptErr error
		if err := ex.Do(ctx, func() { adoptErr = st.AdoptAll([]string{"sim-head"}) }); err != nil {
			t.Fatal(err)
		}
		if adoptErr != nil {
			t.Fatal(adoptErr)
		}
	}
	cancel()
	<-done
	run := func(d time.Duration) {
		t.Helper()
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		if stacks[0].Nodes[0].State() == msg.StateActive && stacks[1].Nodes[0].State() == msg.StateActive {
			break
		}
		run(100 * time.Millisecond)
	}
	for i, st := range stacks {
		if s := st.Nodes[0].State(); s != msg.StateActive {
			t.Fatalf("robot_%d's head node is %s", i+1, s)
		}
		// Each server adopted its own node only.
		for j, other := range st.Nodes[1:] {
			if s := other.State(); s == msg.StateActive {
				t.Errorf("robot_%d: node %s is adopted", i+1, st.Specs[j+1].ID)
			}
		}
	}
	pan := func(st *Stack) float64 { return st.Robot.Head.Angles()[0] * 180 / math.Pi }

	// robot_1 looks 30° one way; robot_2's head stays where it is.
	if err := stacks[0].Server.Bus().Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 30, Speed: 1}); err != nil {
		t.Fatal(err)
	}
	run(3 * time.Second)
	if p1, p2 := pan(stacks[0]), pan(stacks[1]); math.Abs(p1-30) > 3 || math.Abs(p2) > 1 {
		t.Fatalf("after robot_1's command: pans %.1f° and %.1f°, want 30° and 0°", p1, p2)
	}
	// robot_2, from outside its processes, by its namespaced name.
	if err := outside.Publish("/robot_2"+msg.TopicHeadCmd, msg.HeadCommand{Pan: -20, Speed: 1}); err != nil {
		t.Fatal(err)
	}
	run(3 * time.Second)
	if p1, p2 := pan(stacks[0]), pan(stacks[1]); math.Abs(p1-30) > 3 || math.Abs(p2+20) > 3 {
		t.Fatalf("after robot_2's command: pans %.1f° and %.1f°, want 30° and -20°", p1, p2)
	}
	if len(leaked) > 0 {
		t.Errorf("%d messages outside the namespaces, first %s", len(leaked), leaked[0])
	}
}
