package world

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/model/geom"
)

// DefaultStep is the physics step: 1 ms (1 kHz).
const DefaultStep = time.Millisecond

// DefaultTruthRate is how often ground truth is published, Hz.
const DefaultTruthRate = 50

// Model is anything the world steps.
type Model interface {
	// Name identifies the model: its ground truth topic and the target of
	// disturbances. Names are unique within a world.
	Name() string
	// Step advances the model by dt seconds (the world's fixed step).
	Step(dt float64)
}

// Stater is a model whose state can be summarised for the trajectory hash.
type Stater interface {
	// AppendState appends the model's state variables to dst.
	AppendState(dst []float64) []float64
}

// Truther is a model that publishes ground truth.
type Truther interface {
	// Truth returns the model's ground truth, a JSON-encodable value (the
	// bus/msg Sim types).
	Truth() any
}

// Pushable is a model with a body that external forces can push.
type Pushable interface {
	// ApplyForce sets the external force (N, world frame) on the body until
	// the next call; the world calls it before every step while pushes are
	// active and once with zero when they end.
	ApplyForce(f geom.Vec3)
}

// Killable is a model that can be made dead (no torque, no output).
type Killable interface {
	SetDead(dead bool)
}

// Options configures a World. The zero value steps at 1 kHz with seed 0
// and publishes nothing.
type Options struct {
	// Step is the physics step; 0 means DefaultStep. It is rounded to whole
	// microseconds so that a step is an exact number of clock ticks.
	Step time.Duration
	// Seed seeds every random stream the world hands out.
	Seed uint64
	// Bus, when set, carries ground truth and the disturbance service.
	Bus bus.Bus
	// TruthRate is the ground truth publication rate in Hz; 0 means
	// DefaultTruthRate, a negative value publishes none.
	TruthRate float64
	// Hash keeps a running hash of every Stater's state after each step
	// (see Hash); it costs a little time per step.
	Hash bool
}

// World steps models at a fixed rate on an executor. All methods must be
// called on the executor's goroutine (or before it runs).
type World struct {
	ex         *executor.Executor
	step       time.Duration
	dt         float64
	seed       uint64
	bus        bus.Bus
	truthEvery uint64
	hashing    bool

	models  []Model
	order   []string // the models' names in stepping order
	names   map[string]bool
	staters []Stater
	truths  []namedTruth
	bodies  map[string]func(geom.Vec3)
	links   map[string]func(connected bool) error
	devices map[string]func(dead bool)

	pushes  []push
	pushed  map[string]bool // bodies with a non-zero force last step
	steps   uint64
	hash    uint64
	scratch []float64
	timer   *executor.Timer
	service bus.Subscription
	pubErrs uint64
}

type namedTruth struct {
	name string
	t    Truther
}

type push struct {
	body  string
	force geom.Vec3
	steps uint64 // remaining
}

// New returns a world on ex. It does not step until Start.
func New(ex *executor.Executor, o Options) *World {
	step := o.Step.Round(time.Microsecond)
	if step <= 0 {
		step = DefaultStep
	}
	w := &World{
		ex: ex, step: step, dt: step.Seconds(), seed: o.Seed, bus: o.Bus, hashing: o.Hash,
		names: map[string]bool{}, bodies: map[string]func(geom.Vec3){},
		links: map[string]func(bool) error{}, devices: map[string]func(bool){},
		pushed: map[string]bool{}, hash: fnvOffset,
	}
	rate := o.TruthRate
	if rate == 0 {
		rate = DefaultTruthRate
	}
	if rate > 0 && !math.IsInf(rate, 0) {
		w.truthEvery = max(1, uint64(math.Round(1/(rate*w.dt))))
	}
	return w
}

// Add registers m; models step in the order they are added. A Pushable model
// becomes a body and a Killable one a device, both under the model's name.
func (w *World) Add(m Model) error {
	name := m.Name()
	if name == "" {
		return errors.New("world: model name: want a non-empty name")
	}
	if w.names[name] {
		return fmt.Errorf("world: model name %q: already added", name)
	}
	w.names[name] = true
	w.models = append(w.models, m)
	w.order = append(w.order, name)
	if s, ok := m.(Stater); ok {
		w.staters = append(w.staters, s)
	}
	if t, ok := m.(Truther); ok {
		w.truths = append(w.truths, namedTruth{name, t})
	}
	if p, ok := m.(Pushable); ok {
		w.bodies[name] = p.ApplyForce
	}
	if k, ok := m.(Killable); ok {
		w.devices[name] = k.SetDead
	}
	return nil
}

// Func is a Model made of a name and a step function: sim/robot uses it to
// read pins before the physics and write sensors after it.
type Func struct {
	ModelName string
	StepFunc  func(dt float64)
}

// Name implements Model.
func (f Func) Name() string { return f.ModelName }

// Step implements Model.
func (f Func) Step(dt float64) { f.StepFunc(dt) }

// AddBody registers a pushable body under name (for bodies inside a model).
func (w *World) AddBody(name string, apply func(geom.Vec3)) { w.bodies[name] = apply }

// AddLink registers a link that CutLink and RestoreLink switch with connect.
func (w *World) AddLink(name string, connect func(connected bool) error) { w.links[name] = connect }

// AddDevice registers a device that Kill and Revive switch with setDead.
func (w *World) AddDevice(name string, setDead func(dead bool)) { w.devices[name] = setDead }

// Rand returns a random stream for the named consumer, seeded from the
// world's seed and the name, so that adding a consumer does not change the
// numbers another one draws.
func (w *World) Rand(stream string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(stream))
	return rand.New(rand.NewPCG(w.seed, h.Sum64()))
}

// Seed returns the world's seed.
func (w *World) Seed() uint64 { return w.seed }

// Dt returns the step in seconds.
func (w *World) Dt() float64 { return w.dt }

// StepDuration returns the step.
func (w *World) StepDuration() time.Duration { return w.step }

// Steps returns the number of steps taken.
func (w *World) Steps() uint64 { return w.steps }

// Time returns the simulated time since the first step, s.
func (w *World) Time() float64 { return float64(w.steps) * w.dt }

// Models returns the models' names in stepping order.
func (w *World) Models() []string {
	return slices.Clone(w.order)
}

// Start arms the step timer and, with a bus, serves the disturbance
// service. Starting a started world does nothing.
func (w *World) Start() error {
	if w.timer != nil {
		return nil
	}
	if w.bus != nil {
		sub, err := bus.ServeJSON(w.bus, msg.ServiceSimDisturb, w.ex, func(req msg.SimDisturbRequest, reply func(msg.SimDisturbResponse, error)) {
			if err := w.Disturb(req); err != nil {
				reply(msg.SimDisturbResponse{Success: false, Message: err.Error()}, nil)
				return
			}
			reply(msg.SimDisturbResponse{Success: true}, nil)
		})
		if err != nil {
			return fmt.Errorf("world: serving %s: %w", msg.ServiceSimDisturb, err)
		}
		w.service = sub
	}
	w.timer = w.ex.Every(w.step, w.Step)
	return nil
}

// Stop stops stepping and serving.
func (w *World) Stop() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.service != nil {
		_ = w.service.Unsubscribe()
		w.service = nil
	}
}

// Step advances every model by one step: forces from active pushes are
// applied, models step in order, then the hash and ground truth are
// updated.
func (w *World) Step() {
	w.applyPushes()
	for _, m := range w.models {
		m.Step(w.dt)
	}
	w.steps++
	if w.hashing {
		w.scratch = w.scratch[:0]
		for _, s := range w.staters {
			w.scratch = s.AppendState(w.scratch)
		}
		for _, v := range w.scratch {
			w.hash = fnvWord(w.hash, math.Float64bits(v))
		}
	}
	if w.bus != nil && w.truthEvery > 0 && w.steps%w.truthEvery == 0 {
		w.publish()
	}
}

func (w *World) applyPushes() {
	if len(w.pushes) == 0 && len(w.pushed) == 0 {
		return
	}
	sum := map[string]geom.Vec3{}
	live := w.pushes[:0]
	for _, p := range w.pushes {
		sum[p.body] = sum[p.body].Add(p.force)
		if p.steps--; p.steps > 0 {
			live = append(live, p)
		}
	}
	w.pushes = live
	// Bodies pushed last step and not now get their force cleared.
	for body := range w.pushed {
		if _, ok := sum[body]; !ok {
			sum[body] = geom.Vec3{}
		}
	}
	names := make([]string, 0, len(sum))
	for n := range sum {
		names = append(names, n)
	}
	slices.Sort(names) // map order must not reach the models
	clear(w.pushed)
	for _, n := range names {
		w.bodies[n](sum[n])
		if sum[n] != (geom.Vec3{}) {
			w.pushed[n] = true
		}
	}
}

func (w *World) publish() {
	// The bus encodes (or copies) the message: the names need no copy here.
	world := msg.SimWorld{Time: w.Time(), Steps: w.steps, StepS: w.dt, Seed: w.seed, Models: w.order}
	if w.bus.Publish(msg.TopicSimWorld, world) != nil {
		w.pubErrs++
	}
	for _, t := range w.truths {
		if w.bus.Publish(msg.SimTruthTopic(t.name), t.t.Truth()) != nil {
			w.pubErrs++
		}
	}
}

// PublishErrors returns how many ground truth publications the bus refused
// (a closed bus, say); the world keeps stepping regardless.
func (w *World) PublishErrors() uint64 { return w.pubErrs }

// Hash returns the running trajectory hash (FNV-1a over the bits of every
// Stater's state after every step); it needs Options.Hash.
func (w *World) Hash() uint64 { return w.hash }

// Push applies force f (N, world frame) to body for duration d, rounded to
// whole steps (at least one).
func (w *World) Push(body string, f geom.Vec3, d time.Duration) error {
	if _, ok := w.bodies[body]; !ok {
		return fmt.Errorf("world: push target %q: want one of %v", body, sortedKeys(w.bodies))
	}
	if !finite3(f) {
		return fmt.Errorf("world: push force %v: want finite newtons", f)
	}
	if d <= 0 {
		return fmt.Errorf("world: push duration %v: want > 0", d)
	}
	n := uint64(max(1, (d+w.step/2)/w.step))
	w.pushes = append(w.pushes, push{body: body, force: f, steps: n})
	return nil
}

// Impulse applies impulse j (N·s, world frame) to body in one step.
func (w *World) Impulse(body string, j geom.Vec3) error {
	if !finite3(j) {
		return fmt.Errorf("world: impulse %v: want finite N·s", j)
	}
	return w.Push(body, j.Scale(1/w.dt), w.step)
}

// CutLink disconnects the named link.
func (w *World) CutLink(name string) error { return w.setLink(name, false) }

// RestoreLink reconnects the named link.
func (w *World) RestoreLink(name string) error { return w.setLink(name, true) }

func (w *World) setLink(name string, connected bool) error {
	f, ok := w.links[name]
	if !ok {
		return fmt.Errorf("world: link %q: want one of %v", name, sortedKeys(w.links))
	}
	return f(connected)
}

// Kill makes the named device dead.
func (w *World) Kill(name string) error { return w.setDead(name, true) }

// Revive brings a killed device back.
func (w *World) Revive(name string) error { return w.setDead(name, false) }

func (w *World) setDead(name string, dead bool) error {
	f, ok := w.devices[name]
	if !ok {
		return fmt.Errorf("world: device %q: want one of %v", name, sortedKeys(w.devices))
	}
	f(dead)
	return nil
}

// Bodies, Links and Devices list the disturbance targets, sorted.
func (w *World) Bodies() []string { return sortedKeys(w.bodies) }

// Links lists the links CutLink knows, sorted.
func (w *World) Links() []string { return sortedKeys(w.links) }

// Devices lists the devices Kill knows, sorted.
func (w *World) Devices() []string { return sortedKeys(w.devices) }

// Disturb applies a disturbance request (the /saint/sim/disturb service).
func (w *World) Disturb(r msg.SimDisturbRequest) error {
	switch r.Kind {
	case msg.DisturbPush:
		if !(r.DurationS > 0) || r.DurationS > 1e6 {
			return fmt.Errorf("world: duration_s %v: want 0 < duration_s <= 1e6", r.DurationS)
		}
		return w.Push(r.Target, r.Force, time.Duration(r.DurationS*float64(time.Second)))
	case msg.DisturbImpulse:
		return w.Impulse(r.Target, r.Impulse)
	case msg.DisturbCutLink:
		return w.CutLink(r.Target)
	case msg.DisturbRestoreLink:
		return w.RestoreLink(r.Target)
	case msg.DisturbKill:
		return w.Kill(r.Target)
	case msg.DisturbRevive:
		return w.Revive(r.Target)
	}
	return fmt.Errorf("world: kind %q: want push, impulse, cut_link, restore_link, kill or revive", r.Kind)
}

func finite3(v geom.Vec3) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvWord(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= fnvPrime
		v >>= 8
	}
	return h
}
