package world_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/pendulum"
	"github.com/saint-os/saint/sim/world"
)

// mass is a 1 kg point mass on a line, shaken by seeded noise, pushable and
// killable: enough to exercise everything the world does.
type mass struct {
	name  string
	x, v  float64
	force float64
	dead  bool
	rng   *rand.Rand
}

func (m *mass) Name() string { return m.name }
func (m *mass) Step(dt float64) {
	f := m.force + 0.01*m.rng.NormFloat64()
	if m.dead {
		f = 0
	}
	m.v += f * dt
	m.x += m.v * dt
}
func (m *mass) AppendState(dst []float64) []float64 { return append(dst, m.x, m.v) }
func (m *mass) ApplyForce(f geom.Vec3)              { m.force = f[0] }
func (m *mass) SetDead(d bool)                      { m.dead = d }
func (m *mass) Truth() any                          { return map[string]float64{"x": m.x, "v": m.v} }

func newWorld(t testing.TB, ex *executor.Executor, o world.Options) (*world.World, *mass, *pendulum.Pendulum) {
	t.Helper()
	w := world.New(ex, o)
	m := &mass{name: "mass", rng: w.Rand("mass")}
	p := pendulum.New(pendulum.Default())
	p.Set(0.5, 0)
	if err := w.Add(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(p); err != nil {
		t.Fatal(err)
	}
	return w, m, p
}

func run(t testing.TB, seed uint64, speed float64, d time.Duration) uint64 {
	t.Helper()
	ex := executor.New(&executor.Options{Clock: clock.NewVirtual(clock.Epoch()), Speed: speed})
	w, _, _ := newWorld(t, ex, world.Options{Seed: seed, Hash: true})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Steps(), uint64(d/time.Millisecond); got != want {
		t.Fatalf("%d steps in %v, want %d", got, d, want)
	}
	return w.Hash()
}

// Same seed, same trajectory, bit for bit; another seed, another one; and
// pacing the executor to the wall clock changes nothing.
func TestDeterminism(t *testing.T) {
	a, b := run(t, 7, 0, time.Second), run(t, 7, 0, time.Second)
	if a != b {
		t.Errorf("seed 7 twice: hashes %#x and %#x differ", a, b)
	}
	if c := run(t, 8, 0, time.Second); c == a {
		t.Errorf("seeds 7 and 8 give the same hash %#x", a)
	}
	fast, paced := run(t, 7, 0, 200*time.Millisecond), run(t, 7, 1, 200*time.Millisecond)
	if fast != paced {
		t.Errorf("speed 0 hash %#x, speed 1 hash %#x: pacing changed the trajectory", fast, paced)
	}
}

func TestStepOrderAndOptions(t *testing.T) {
	ex := executor.NewVirtual()
	w := world.New(ex, world.Options{Step: 2 * time.Millisecond})
	var order []string
	for _, n := range []string{"c", "a", "b"} {
		if err := w.Add(world.Func{ModelName: n, StepFunc: func(dt float64) {
			if dt != 0.002 {
				t.Errorf("dt %v, want 0.002", dt)
			}
			order = append(order, n)
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if w.Add(world.Func{ModelName: "a", StepFunc: func(float64) {}}) == nil {
		t.Error("a second model named a was accepted")
	}
	if w.Add(world.Func{StepFunc: func(float64) {}}) == nil {
		t.Error("a model without a name was accepted")
	}
	_ = w.Start()
	_ = w.Start()
	_ = ex.RunFor(context.Background(), 4*time.Millisecond)
	w.Stop()
	_ = ex.RunFor(context.Background(), 4*time.Millisecond)
	if got := len(order); got != 6 || order[0] != "c" || order[1] != "a" || order[2] != "b" || order[3] != "c" {
		t.Errorf("stepping order %v, want c a b c a b", order)
	}
	if w.Time() != 0.004 {
		t.Errorf("time %v, want 0.004", w.Time())
	}
}

func TestPushImpulseKill(t *testing.T) {
	ex := executor.NewVirtual()
	w, m, _ := newWorld(t, ex, world.Options{})
	m.rng = rand.New(rand.NewPCG(0, 0))
	// 10 N for 100 ms on 1 kg: Δv = 1 m/s (noise adds ~1e-4).
	if err := w.Push("mass", geom.Vec3{10, 0, 0}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		w.Step()
	}
	if math.Abs(m.v-1) > 0.01 || m.force != 0 {
		t.Errorf("after a 1 N·s push: v = %.4f m/s (want 1), force now %v (want 0)", m.v, m.force)
	}
	if err := w.Impulse("mass", geom.Vec3{-2, 0, 0}); err != nil {
		t.Fatal(err)
	}
	w.Step()
	w.Step()
	if math.Abs(m.v+1) > 0.01 {
		t.Errorf("after a −2 N·s impulse: v = %.4f, want −1", m.v)
	}
	if err := w.Kill("mass"); err != nil || !m.dead {
		t.Errorf("Kill: %v, dead %v", err, m.dead)
	}
	if err := w.Revive("mass"); err != nil || m.dead {
		t.Errorf("Revive: %v, dead %v", err, m.dead)
	}
	for _, bad := range []error{
		w.Push("nobody", geom.Vec3{1}, time.Second),
		w.Push("mass", geom.Vec3{math.NaN()}, time.Second),
		w.Push("mass", geom.Vec3{1}, -time.Second),
		w.Push("mass", geom.Vec3{1}, 0),
		w.Impulse("mass", geom.Vec3{0, math.Inf(1)}),
		w.Kill("pendulum"), // not killable
		w.CutLink("nothing"),
	} {
		if bad == nil {
			t.Error("a bad disturbance was accepted")
		}
	}
}

// Ground truth and the disturbance service over the in-process bus.
func TestBus(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	b := br.Connect(nil)
	defer b.Close()
	w, m, _ := newWorld(t, ex, world.Options{Bus: b, TruthRate: 100})
	connected := true
	w.AddLink("i2c/0x68", func(c bool) error { connected = c; return nil })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var worlds []msg.SimWorld
	var truths int
	_, _ = bus.SubscribeJSON(b, msg.TopicSimWorld, bus.QoS{Depth: 100}, ex, func(_ string, v msg.SimWorld) { worlds = append(worlds, v) })
	_, _ = b.Subscribe(msg.TopicSimAllTruth, bus.QoS{Depth: 100}, ex, func(m bus.Msg) {
		if m.Topic == msg.SimTruthTopic("mass") || m.Topic == msg.SimTruthTopic("pendulum") {
			truths++
		}
	})
	_ = ex.RunFor(context.Background(), 100*time.Millisecond)
	if len(worlds) != 10 || worlds[9].Steps != 100 || worlds[9].Time != 0.1 || len(worlds[9].Models) != 2 {
		t.Errorf("got %d world messages at 100 Hz over 0.1 s (last %+v), want 10 ending at step 100", len(worlds), worlds[len(worlds)-1])
	}
	if truths != 20 {
		t.Errorf("got %d truth messages, want 20 (two models, 10 each)", truths)
	}

	call := func(req msg.SimDisturbRequest) msg.SimDisturbResponse {
		var resp msg.SimDisturbResponse
		var got bool
		bus.CallAsyncJSON(b, msg.ServiceSimDisturb, req, time.Second, ex, func(r msg.SimDisturbResponse, err error) {
			if err != nil {
				t.Errorf("%+v: %v", req, err)
			}
			resp, got = r, true
		})
		_ = ex.RunFor(context.Background(), time.Millisecond)
		if !got {
			t.Fatalf("%+v: no answer", req)
		}
		return resp
	}
	if r := call(msg.SimDisturbRequest{Kind: msg.DisturbCutLink, Target: "i2c/0x68"}); !r.Success || connected {
		t.Errorf("cut_link: %+v, connected %v", r, connected)
	}
	if r := call(msg.SimDisturbRequest{Kind: msg.DisturbRestoreLink, Target: "i2c/0x68"}); !r.Success || !connected {
		t.Errorf("restore_link: %+v, connected %v", r, connected)
	}
	v0 := m.v
	if r := call(msg.SimDisturbRequest{Kind: msg.DisturbPush, Target: "mass", Force: [3]float64{100}, DurationS: 0.01}); !r.Success {
		t.Errorf("push: %+v", r)
	}
	_ = ex.RunFor(context.Background(), 20*time.Millisecond)
	if dv := m.v - v0; math.Abs(dv-1) > 0.02 {
		t.Errorf("1 N·s push over the bus changed v by %.3f, want 1", dv)
	}
	for _, bad := range []msg.SimDisturbRequest{
		{Kind: "explode", Target: "mass"},
		{Kind: msg.DisturbPush, Target: "mass", Force: [3]float64{1}, DurationS: -1},
		{Kind: msg.DisturbPush, Target: "mass", Force: [3]float64{1}, DurationS: 1e9},
		{Kind: msg.DisturbKill, Target: "ghost"},
	} {
		if r := call(bad); r.Success || r.Message == "" {
			t.Errorf("%+v: %+v, want a failure that says why", bad, r)
		}
	}
	// A request of the wrong shape is answered with an error, not a panic.
	var errGot error
	var answered bool
	b.CallAsync(msg.ServiceSimDisturb, json.RawMessage(`[1,2]`), time.Second, ex, func(_ bus.Msg, err error) { errGot, answered = err, true })
	_ = ex.RunFor(context.Background(), time.Millisecond)
	if !answered || errGot == nil {
		t.Errorf("malformed request: answered %v, error %v; want an error", answered, errGot)
	}
}

// The pendulum's accuracy holds when the world steps it on the executor:
// 60 virtual seconds are exactly 60 000 steps and the energy drifts less
// than 0.1 %.
func TestPendulumOnExecutor(t *testing.T) {
	ex := executor.NewVirtual()
	w := world.New(ex, world.Options{})
	p := pendulum.New(pendulum.Default())
	p.Set(1, 0)
	e0 := p.Energy()
	if err := w.Add(p); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	if err := w.Add(world.Func{ModelName: "probe", StepFunc: func(float64) {
		worst = math.Max(worst, math.Abs(p.Energy()-e0)/e0)
	}}); err != nil {
		t.Fatal(err)
	}
	_ = w.Start()
	_ = ex.RunFor(context.Background(), time.Minute)
	if w.Steps() != 60000 || worst >= 1e-3 {
		t.Errorf("%d steps in a minute (want 60000), energy drift %.3g (want < 0.1 %%)", w.Steps(), worst)
	}
}

// A bus that refuses publications does not stop the world; the refusals
// are counted.
func TestPublishErrors(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.NewBroker().Connect(nil)
	w, _, _ := newWorld(t, ex, world.Options{Bus: b, TruthRate: 1000})
	_ = b.Close()
	for i := 0; i < 3; i++ {
		w.Step()
	}
	if w.Steps() != 3 || w.PublishErrors() != 9 {
		t.Errorf("%d steps, %d publish errors; want 3 and 9 (world + two models, three times)", w.Steps(), w.PublishErrors())
	}
}
