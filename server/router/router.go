package router

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/server/router/target"
)

// Options configures a Router.
type Options struct {
	// Exec is the executor the router runs on (required): the server's.
	Exec *executor.Executor
	// Bus is where inputs arrive and outputs go (required).
	Bus bus.Bus
	// DataDir is where the routes and presets are kept (DataDir/routes/).
	// Empty keeps them in memory only.
	DataDir string
	// Presets are the preset files that seed DataDir/routes/presets at the
	// first start, and the default preset the routes. Nil means the
	// embedded fixtures' config/routes.
	Presets fs.FS
	// TickHz is the output rate (default 50).
	TickHz float64
	// StatusEvery is how often RouteStatus is published when nothing
	// changes (default 1 s).
	StatusEvery time.Duration
	// LiveLink answers list_livelink_sources and get_livelink_subject;
	// nil means a registry with no subjects.
	LiveLink SubjectRegistry
	Log      *slog.Logger
	// OnEvent, if set, is told of notable events (e-stop engaged and
	// cleared, routes changed) for the activity log. It runs on the
	// executor or on a WebSocket handler's goroutine, and must not block.
	OnEvent func(level, message string)
	// Sessions, if set, holds the motors of each output the router drives
	// (the root motor middleware, server/motors): an output is held while
	// a route drives it and released when none does and on an emergency
	// stop; one whose motors another client's session holds is not sent.
	Sessions OutputSessions
	// Arms gives an arm's kinematics (geometry and joint limits) for arms
	// move_pose and the arms' pose targets, or an error saying why the arm
	// has none (its joint table says supports_kinematics: false). It is
	// called from WebSocket handlers and on the executor, so it must be
	// safe for concurrent use and quick. Nil gives both arms
	// kinematics.DefaultArm.
	Arms func(side string) (kinematics.Arm, error)
	// Unreachable, if set, says why commands to target cannot reach the
	// node that runs it ("" when they may): a WebSocket motion command is
	// then refused with that reason rather than answered as sent. It runs
	// on the executor. The server's says so of a role whose adopted node
	// the bus does not grant that role (its grants were lost).
	Unreachable func(target string) string
}

// OutputSessions holds the motors behind the router's outputs for it, so
// that no other client drives them meanwhile. Both run on the executor.
type OutputSessions interface {
	// Hold takes target's motors for the router, or tells that they are
	// still held; the router calls it before every message it sends to
	// target. ErrHoldPending says they are being taken (nothing is sent
	// yet); another error says who holds them instead.
	Hold(target string) error
	// Release gives them back.
	Release(target string)
}

// ErrHoldPending is OutputSessions.Hold's answer while the motors are
// being taken: the output waits, without a warning.
var ErrHoldPending = errors.New("router: the output's motors are being taken")

// DefaultTickHz is the output rate when Options.TickHz is 0.
const DefaultTickHz = 50

// TickPeriod is the time between two output ticks.
func (o Options) TickPeriod() time.Duration {
	hz := o.TickHz
	if hz == 0 {
		hz = DefaultTickHz
	}
	return time.Duration(float64(time.Second) / hz)
}

// Router maps inputs to outputs. Its methods run on the executor, except
// where they say otherwise.
type Router struct {
	o      Options
	ex     *executor.Executor
	log    *slog.Logger
	tick   time.Duration
	store  *store
	saveMu sync.Mutex // orders the writes of configuration changes
	// targets is the table of output targets (Targets), names the
	// routable ones in order.
	targets targetTable
	names   []string

	// Executor state.
	blending  Blending
	routes    []Route // by descending priority
	inputs    map[string]*inputSnapshot
	contrib   map[string]map[string]*contribution // target → route id →
	outputs   map[string]*output
	lastInput map[string]time.Time // route id → last input
	estop     estopState
	// limits are the command limits the motion roles advertise, by
	// target: what the role will clamp of the values the router sends.
	limits     map[string]msg.CommandLimits
	subs       []bus.Subscription
	ticker     *executor.Timer
	lastStatus []byte // the last published RouteStatus's signature
	statusAt   time.Time
	checkedAt  time.Time // the last check for a change (publishStatus)
	sigBuf     []byte    // where the next signature is built
	started    bool
	// camera holds the head camera's claims (camera.go).
	camera cameraClaims
}

type inputSnapshot struct {
	source, subject string
	values          map[string]float64
	at              time.Time
}

// contribution is what one route last asked of one output.
type contribution struct {
	routeID  string
	priority int
	source   string
	values   map[string]float64
	at       time.Time
}

// New loads the routes and presets (from DataDir, seeding it at the first
// start) and returns a router that is not yet running. It reads files, so
// call it before the executor runs the router, not from a callback.
func New(o Options) (*Router, error) {
	if o.Exec == nil {
		return nil, errors.New("router: Options.Exec is required")
	}
	if o.Bus == nil {
		return nil, errors.New("router: Options.Bus is required")
	}
	if o.TickHz == 0 {
		o.TickHz = DefaultTickHz
	}
	if o.TickHz < 1 || o.TickHz > 1000 {
		return nil, fmt.Errorf("router: Options.TickHz: want 1 to 1000, got %v", o.TickHz)
	}
	if o.StatusEvery <= 0 {
		o.StatusEvery = time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.LiveLink == nil {
		o.LiveLink = emptyRegistry{}
	}
	st, cfg, err := openStore(o.DataDir, o.Presets)
	if err != nil {
		return nil, err
	}
	r := &Router{
		o: o, ex: o.Exec, log: o.Log, store: st,
		tick:      o.TickPeriod(),
		inputs:    map[string]*inputSnapshot{},
		contrib:   map[string]map[string]*contribution{},
		outputs:   map[string]*output{},
		lastInput: map[string]time.Time{},
		limits:    map[string]msg.CommandLimits{},
		targets:   newTargetTable(),
		names:     TargetNames(),
	}
	for _, t := range r.names {
		r.outputs[t] = &output{target: t, last: map[string]float64{}}
	}
	r.bindPoseTargets()
	r.applyConfig(cfg)
	return r, nil
}

// applyConfig replaces the routes (and the blending, if cfg has it).
func (r *Router) applyConfig(cfg *Config) {
	if cfg.Blending != nil {
		r.blending = *cfg.Blending
	} else if r.blending.Mode == "" {
		r.blending = DefaultBlending()
	}
	rs := make([]Route, len(cfg.Routes))
	for i, rt := range cfg.Routes {
		rs[i] = cloneRoute(rt)
	}
	sortRoutes(rs)
	r.routes = rs
	// Contributions of routes that are gone or changed start afresh.
	for _, byRoute := range r.contrib {
		clear(byRoute)
	}
	for id := range r.lastInput {
		if r.routeIndex(id) < 0 {
			delete(r.lastInput, id)
		}
	}
}

// Start subscribes to the input topics and starts the output tick. Call it
// on the executor.
func (r *Router) Start() error {
	if r.started {
		return errors.New("router: already started")
	}
	for _, sub := range []func() error{
		// Every source's input becomes an Input; the sources with a
		// message of their own are converted here, the others send
		// msg.RouterInput.
		inputTopic(r, msg.TopicRCState, RCInput),
		inputTopic(r, msg.TopicLiveLinkFrames, func(f msg.LiveLinkFrame) (Input, bool) { return LiveLinkInput(f), true }),
		inputTopic(r, msg.TopicRouterInput, func(in msg.RouterInput) (Input, bool) { return BusInput(in), true }),
		func() error { return subscribeJSON(r, msg.TopicConsoleOverride, r.consoleOverride) },
		func() error { return subscribeJSON(r, msg.TopicConsoleInput, r.consoleInput) },
		limitsTopic(r, target.Head, msg.TopicPrefix(msg.RoleHead, "")),
		limitsTopic(r, target.ArmsLeft, msg.TopicPrefix(msg.RoleArms, msg.ArmLeft)),
		limitsTopic(r, target.ArmsRight, msg.TopicPrefix(msg.RoleArms, msg.ArmRight)),
		limitsTopic(r, target.Tracks, msg.TopicPrefix(msg.RoleTracks, "")),
		func() error { return subscribeJSON(r, msg.TopicHeadState, r.headCameraState) },
	} {
		if err := sub(); err != nil {
			r.Stop()
			return err
		}
	}
	r.ticker = r.ex.Every(r.tick, r.onTick)
	r.camera.quit = make(chan struct{})
	r.started = true
	r.publishStatus(r.ex.Now(), true)
	return nil
}

// subscribeJSON subscribes f to topic's messages decoded as T on the
// executor; one that does not decode is counted and logged by the bus.
func subscribeJSON[T any](r *Router, topic string, f func(T)) error {
	sub, err := bus.SubscribeJSON(r.o.Bus, topic, bus.QoS{Depth: 4}, r.ex, func(_ string, v T) { f(v) })
	if err != nil {
		return fmt.Errorf("router: subscribe %s: %w", topic, err)
	}
	r.subs = append(r.subs, sub)
	return nil
}

// inputTopic returns the subscription of an input topic whose messages
// convert gives as inputs.
func inputTopic[T any](r *Router, topic string, convert func(T) (Input, bool)) func() error {
	return func() error {
		return subscribeJSON(r, topic, func(v T) {
			if in, ok := convert(v); ok {
				_ = r.Submit(in)
			}
		})
	}
}

// limitsTopic returns the subscription to the CommandLimits of the role
// under prefix, which drives target.
func limitsTopic(r *Router, target, prefix string) func() error {
	return func() error {
		return subscribeJSON(r, msg.LimitsTopic(prefix), func(l msg.CommandLimits) { r.limits[target] = l })
	}
}

// clamps reports which of the values last sent to target its role clamps
// (nil, not known, when the role has not advertised its limits).
func (r *Router) clamps(target string) ([]msg.Clamp, bool) {
	l, ok := r.limits[target]
	o := r.outputs[target]
	if !ok || o == nil {
		return nil, false
	}
	c := l.Apply(o.last)
	if c == nil {
		c = []msg.Clamp{}
	}
	return c, true
}

// consoleInput engages the emergency stop when the console's e-stop
// control is pressed.
func (r *Router) consoleInput(in msg.ConsoleInput) {
	if in.Control == ConsoleEStopControl && (in.Event == msg.EventPress || in.Event == msg.EventChange && in.Value >= 0.5) {
		r.EStop(SourceConsole, "console emergency stop")
	}
}

// Stop ends the subscriptions and the tick. Call it on the executor.
func (r *Router) Stop() {
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
	r.subs = nil
	if r.ticker != nil {
		r.ticker.Stop()
		r.ticker = nil
	}
	if r.camera.quit != nil {
		close(r.camera.quit)
		r.camera.quit = nil
	}
	r.started = false
}

// Post hands in to the router from any goroutine (Submit's result is
// dropped).
func (r *Router) Post(in Input) {
	r.ex.Post(func() { _ = r.Submit(in) })
}

// Submit routes one input. Call it on the executor (from other goroutines,
// use Post, or Exec().Do with Submit inside). Every enabled route whose
// input matches takes it; an input with a Command (a WebSocket command)
// is sent to its output at once, others at the next tick. Command
// target.CommandEStop engages the emergency stop (Values["enable"] absent or
// non-zero) or releases it (0), whatever the routes. It returns ErrNoRoute
// when no route took the input.
func (r *Router) Submit(in Input) error {
	now := in.Time
	if now.IsZero() {
		now = r.ex.Now()
	}
	if in.Command == target.CommandEStop {
		if v, ok := in.Values["enable"]; ok && v == 0 {
			r.ClearEStop(in.Source)
		} else {
			r.EStop(in.Source, "estop command")
		}
		return nil
	}
	snap := r.snapshot(in, now)
	var flush []string
	matched := false
	for i := range r.routes {
		rt := &r.routes[i]
		if !rt.Enabled || !matches(rt, &in) {
			continue
		}
		if rt.Mapping.Passthrough {
			out := rt.Output.Target
			if out == target.Any {
				out = in.Target
			}
			if _, ok := r.outputs[out]; !ok {
				continue
			}
			matched = true
			r.lastInput[rt.ID] = now
			if in.Command == target.CommandCamera {
				if out == target.Head {
					flush = appendOnce(flush, "camera")
				}
				continue
			}
			c := r.contribution(rt, out, now)
			for k, v := range in.Values {
				c.values[k] = v
			}
			c.at = now
			r.takeEStop(rt, c)
			if in.Command != "" {
				flush = appendOnce(flush, out)
			}
			continue
		}
		matched = true
		r.lastInput[rt.ID] = now
		c := r.contribution(rt, rt.Output.Target, now)
		clear(c.values)
		for p, v := range mapValues(rt.Mapping.List, snap.values) {
			c.values[p] = v
		}
		c.at = now
		r.takeEStop(rt, c)
	}
	if !matched {
		return ErrNoRoute
	}
	for _, t := range flush {
		if t == "camera" {
			r.claimCamera(in.holder(), in.Values["enable"] != 0)
			continue
		}
		r.update(r.outputs[t], now)
	}
	if len(flush) > 0 {
		r.publishStatus(now, false)
	}
	return nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// commandNames are the commands a passthrough input may carry (the
// WebSocket API's robot control actions that produce motion or a device
// change, package target's).
func commandNames() []string {
	return []string{target.CommandMove, target.CommandHome, target.CommandCamera, target.CommandGripper, target.CommandDrive, target.CommandStop, target.CommandEStop}
}

func knownCommand(c string) bool {
	for _, n := range commandNames() {
		if n == c {
			return true
		}
	}
	return false
}

func matches(rt *Route, in *Input) bool {
	ri := &rt.Input
	if ri.Source != in.Source {
		return false
	}
	if ri.Subject != "" && ri.Subject != in.Subject {
		return false
	}
	if ri.Type != "" && in.Type != "" && ri.Type != in.Type {
		return false
	}
	if ri.Protocol != "" && in.Protocol != "" && ri.Protocol != in.Protocol {
		return false
	}
	if !rt.Mapping.Passthrough {
		return in.Command == ""
	}
	if rt.Output.Target != target.Any && in.Target != "" && in.Target != rt.Output.Target {
		return false
	}
	if rt.Output.Target == target.Any && in.Target == "" {
		return false
	}
	if len(ri.CommandTypes) == 0 {
		return true
	}
	for _, c := range ri.CommandTypes {
		if c == in.Command {
			return true
		}
	}
	return false
}

// snapshot merges in's values into the latest values of its source and
// subject, which mapped routes and the preview read.
func (r *Router) snapshot(in Input, now time.Time) *inputSnapshot {
	k := in.Source + "\x00" + in.Subject
	s := r.inputs[k]
	if s == nil {
		s = &inputSnapshot{source: in.Source, subject: in.Subject, values: map[string]float64{}}
		r.inputs[k] = s
	}
	for n, v := range in.Values {
		s.values[n] = v
	}
	s.at = now
	return s
}

func (r *Router) contribution(rt *Route, target string, now time.Time) *contribution {
	byRoute := r.contrib[target]
	if byRoute == nil {
		byRoute = map[string]*contribution{}
		r.contrib[target] = byRoute
	}
	c := byRoute[rt.ID]
	if c == nil || !r.fresh(c.at, now) {
		c = &contribution{routeID: rt.ID, values: map[string]float64{}}
		byRoute[rt.ID] = c
	}
	c.priority = rt.EffectivePriority()
	c.source = rt.Input.Source
	return c
}

// mapValues applies a route's mappings to the input values it has; the
// mappings to one property add up (the facecap_head preset drives tilt
// from eyeLookUpLeft and eyeLookDownLeft).
func mapValues(list []Map, in map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for i := range list {
		m := &list[i]
		v, ok := in[m.From]
		if !ok {
			continue
		}
		out[m.To] += m.Apply(v)
	}
	return out
}

func (r *Router) timeout() time.Duration {
	return time.Duration(r.blending.SourceTimeoutMS) * time.Millisecond
}

func (r *Router) fresh(at, now time.Time) bool { return now.Sub(at) <= r.timeout() }

func (r *Router) event(level, text string) {
	switch level {
	case "warn":
		r.log.Warn(text, "source", "router")
	default:
		r.log.Info(text, "source", "router")
	}
	if r.o.OnEvent != nil {
		r.o.OnEvent(level, text)
	}
}

// Exec returns the router's executor.
func (r *Router) Exec() *executor.Executor { return r.ex }

// Routes returns a copy of the routes, highest priority first. Call it on
// the executor.
func (r *Router) Routes() []Route {
	out := make([]Route, len(r.routes))
	for i, rt := range r.routes {
		out[i] = cloneRoute(rt)
	}
	return out
}

// Blending returns the blending configuration. Call it on the executor.
func (r *Router) Blending() Blending { return r.blending }

// config is the current configuration, for saving.
func (r *Router) config() *Config {
	b := r.blending
	return &Config{Blending: &b, Routes: r.Routes()}
}

func (r *Router) routeIndex(id string) int {
	for i := range r.routes {
		if r.routes[i].ID == id {
			return i
		}
	}
	return -1
}

// setRoute adds or replaces a route (on the executor).
func (r *Router) setRoute(rt Route) {
	rt = cloneRoute(rt)
	if i := r.routeIndex(rt.ID); i >= 0 {
		r.routes[i] = rt
	} else {
		r.routes = append(r.routes, rt)
	}
	sortRoutes(r.routes)
	for _, byRoute := range r.contrib {
		delete(byRoute, rt.ID)
	}
}

func (r *Router) deleteRoute(id string) bool {
	i := r.routeIndex(id)
	if i < 0 {
		return false
	}
	r.routes = append(r.routes[:i], r.routes[i+1:]...)
	for _, byRoute := range r.contrib {
		delete(byRoute, id)
	}
	delete(r.lastInput, id)
	return true
}
