package router

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"sort"
	"strconv"
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

// Input is one input for the router, whatever its source: an RC frame, a
// LiveLink frame, a joystick, a WebSocket command, a ROS message, an
// autonomous behaviour, a failsafe. It is the one contract between the
// sources and the router. Sources in the server's process hand it to a
// Sink on the executor (the joystick, the WebSocket commands); sources
// elsewhere publish it as msg.RouterInput on msg.TopicRouterInput (see
// BusInput); the RC and LiveLink receivers, whose messages have other
// readers too, publish their own messages, which the router turns into
// inputs with RCInput and LiveLinkInput.
type Input struct {
	Source   string // msg.SourceRC ...
	Subject  string // LiveLink subject name
	Type     string // LiveLink subject type
	Protocol string // RC protocol
	// Target is the output a passthrough input is for ("head",
	// "arms.left"); Command is what it asks ("move", "home", "drive").
	Target  string
	Command string
	// Holder is who, within Source, sent the input, for a source with
	// many users that each hold something of their own: the WebSocket
	// client or the Foxglove server holding the head camera on
	// (target.CommandCamera). Empty for a source that is one party (ros2, rc).
	Holder string
	// Values are by property name: "channel_2", "headYaw", or for
	// passthrough the output's own properties ("pan", "linear").
	Values map[string]float64
	// Time is when the input arrived; zero means now.
	Time time.Time
}

// Sink takes inputs on the executor: a *Router.
type Sink interface {
	Submit(in Input) error
}

// ErrNoRoute is returned by Submit when no enabled route takes the input.
var ErrNoRoute = errors.New("router: no enabled route takes this input")

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

// output is the router's state for one output target.
type output struct {
	target    string
	active    bool
	held      bool               // Options.Sessions holds its motors
	refused   string             // why the last Hold failed, "" when it did not
	winner    string             // route driving it (priority and blend modes)
	routeIDs  []string           // active routes, highest priority first
	last      map[string]float64 // values last sent
	blending  bool               // a blend-mode ramp is under way
	blendFrom map[string]float64
	blendAt   time.Time
}

type estopState struct {
	active bool
	source string
	reason string
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

// RCInput turns an RC receiver state into an input: "channel_N" is
// channel N's normalised value. A receiver that is not connected or in
// failsafe gives no input, so the RC routes time out and the other
// sources take over; the receiver carries out hold and neutral by the
// values it publishes, and its e-stop failsafe with a RouterInput.
func RCInput(s msg.RCReceiverState) (Input, bool) {
	if !s.Connected || s.Failsafe {
		return Input{}, false
	}
	in := Input{Source: msg.SourceRC, Protocol: s.Protocol, Values: make(map[string]float64, len(s.Channels))}
	for _, c := range s.Channels {
		if c.Failsafe {
			continue
		}
		in.Values[msg.RCChannelProperty(int(c.ChannelNumber))] = float64(c.Normalized)
	}
	return in, true
}

// LiveLinkInput turns a LiveLink frame into an input: every property by
// its name (blend shapes, bones). Transform and camera subjects also give
// their transform as "x", "y", "z" (metres), "yaw", "pitch", "roll"
// (degrees; rotations about z, y and x, applied in that order) and the
// rotation quaternion itself as "qw", "qx", "qy", "qz" (normalised), which
// the arms' pose targets take.
func LiveLinkInput(f msg.LiveLinkFrame) Input {
	in := Input{Source: msg.SourceLiveLink, Subject: f.SubjectName, Type: f.SubjectType,
		Values: make(map[string]float64, len(f.PropertyNames)+10)}
	if f.SubjectType == msg.SubjectTransform || f.SubjectType == msg.SubjectCamera {
		t := f.Transform
		in.Values["x"], in.Values["y"], in.Values["z"] = t.Translation.X, t.Translation.Y, t.Translation.Z
		in.Values["yaw"], in.Values["pitch"], in.Values["roll"] = eulerDegrees(t.Rotation)
		q := t.Rotation
		if n := math.Sqrt(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W); n > 0 {
			in.Values["qw"], in.Values["qx"], in.Values["qy"], in.Values["qz"] = q.W/n, q.X/n, q.Y/n, q.Z/n
		}
	}
	for i, n := range f.PropertyNames {
		if i < len(f.PropertyValues) {
			in.Values[n] = float64(f.PropertyValues[i])
		}
	}
	return in
}

// eulerDegrees converts a rotation to yaw (about z), pitch (about y) and
// roll (about x), in degrees.
func eulerDegrees(q msg.Quaternion) (yaw, pitch, roll float64) {
	n := math.Sqrt(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W)
	if n == 0 {
		return 0, 0, 0
	}
	x, y, z, w := q.X/n, q.Y/n, q.Z/n, q.W/n
	yaw = math.Atan2(2*(w*z+x*y), 1-2*(y*y+z*z))
	pitch = math.Asin(math.Max(-1, math.Min(1, 2*(w*y-z*x))))
	roll = math.Atan2(2*(w*x+y*z), 1-2*(x*x+y*y))
	const deg = 180 / math.Pi
	return yaw * deg, pitch * deg, roll * deg
}

// BusInput turns a RouterInput from the bus into an input.
func BusInput(m msg.RouterInput) Input {
	in := Input{Source: m.Source, Subject: m.Subject, Target: m.Target, Command: m.Command,
		Values: make(map[string]float64, len(m.Values))}
	for k, v := range m.Values {
		in.Values[k] = float64(v)
	}
	return in
}

// The console's manual override (msg.ConsoleOverride) outranks every
// source but safety; its emergency stop button is the control named
// ConsoleEStopControl.
const (
	SourceConsole       = "console"
	ConsolePriority     = 999
	ConsoleOverrideID   = "console_override"
	ConsoleEStopControl = "estop"
)

// consoleOverride takes a ConsoleOverride: while Active, its values drive
// Target above every route but safety ones, for as long as the console
// keeps sending (source_timeout_ms, as every source); Active false hands
// the output back at once.
func (r *Router) consoleOverride(ov msg.ConsoleOverride) {
	o, ok := r.outputs[ov.Target]
	if !ok {
		r.log.Warn("console override for an unknown target", "target", ov.Target, "source", "router")
		return
	}
	now := r.ex.Now()
	byRoute := r.contrib[ov.Target]
	if byRoute == nil {
		byRoute = map[string]*contribution{}
		r.contrib[ov.Target] = byRoute
	}
	if !ov.Active {
		delete(byRoute, ConsoleOverrideID)
	} else {
		c := &contribution{routeID: ConsoleOverrideID, priority: ConsolePriority, source: SourceConsole,
			values: make(map[string]float64, len(ov.Values)), at: now}
		for k, v := range ov.Values {
			c.values[k] = float64(v)
		}
		if v, ok := c.values[PropertyEStop]; ok {
			delete(c.values, PropertyEStop)
			if v >= 0.5 {
				r.EStop(SourceConsole, "console override")
			}
		}
		byRoute[ConsoleOverrideID] = c
	}
	r.update(o, now)
	r.publishStatus(now, false)
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

// takeEStop engages the e-stop if the route drove "estop" on, and takes
// the property out of the values sent to the output.
func (r *Router) takeEStop(rt *Route, c *contribution) {
	v, ok := c.values[PropertyEStop]
	if !ok {
		return
	}
	delete(c.values, PropertyEStop)
	if v >= 0.5 {
		r.EStop(rt.Input.Source, "route "+rt.ID)
	}
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

// EStop engages the emergency stop: tracks get zero velocity and the
// estop topic at once, head and arm outputs stop, and it stays so until
// ClearEStop. Call it on the executor.
func (r *Router) EStop(source, reason string) {
	if r.estop.active {
		return // latched already; the tick keeps the tracks at zero
	}
	now := r.ex.Now()
	r.estop = estopState{active: true, source: source, reason: reason}
	r.event("warn", fmt.Sprintf("emergency stop engaged by %s (%s)", source, reason))
	for _, t := range EStopTopics() {
		r.publish(t, msg.EStop{Active: true, Source: source, Reason: reason})
	}
	// The motors the router held go back (the motor middleware ends
	// every session on an e-stop).
	for _, name := range r.names {
		r.release(r.outputs[name])
	}
	// Targets that stop (the tracks) are sent their stop at once.
	for _, name := range r.names {
		if t := r.targets[name]; t.Stop != nil {
			r.outputs[name].last = clone(t.Stop)
			r.publishAll(t.Encode(t.Stop))
		}
	}
	r.publishStatus(now, true) // an e-stop shows at once
}

// ClearEStop releases the emergency stop. Inputs from before it are
// forgotten, so nothing moves until a source sends again. Call it on the
// executor.
func (r *Router) ClearEStop(source string) {
	if !r.estop.active {
		return
	}
	r.estop = estopState{}
	for _, t := range EStopTopics() {
		r.publish(t, msg.EStop{Active: false, Source: source})
	}
	for _, byRoute := range r.contrib {
		clear(byRoute)
	}
	r.event("info", "emergency stop released by "+source)
	r.publishStatus(r.ex.Now(), true)
}

// EStopActive reports whether the emergency stop is latched.
func (r *Router) EStopActive() bool { return r.estop.active }

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

func (r *Router) publishAll(ps []Publication) {
	for _, p := range ps {
		r.publish(p.Topic, p.Message)
	}
}

// clone copies values.
func clone(v Values) map[string]float64 {
	out := make(map[string]float64, len(v))
	for k, x := range v {
		out[k] = x
	}
	return out
}

func (r *Router) publish(topic string, v any) {
	if err := r.o.Bus.Publish(topic, v); err != nil {
		r.log.Warn("router publish failed", "topic", topic, "err", err)
	}
}

func (r *Router) onTick() {
	now := r.ex.Now()
	for _, t := range r.names {
		r.update(r.outputs[t], now)
	}
	r.publishStatus(now, false)
}

// active lists the fresh contributions to target, highest priority first,
// forgetting stale ones.
func (r *Router) active(target string, now time.Time) []*contribution {
	var cs []*contribution
	for id, c := range r.contrib[target] {
		if !r.fresh(c.at, now) {
			delete(r.contrib[target], id)
			continue
		}
		if len(c.values) == 0 {
			continue
		}
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].priority != cs[j].priority {
			return cs[i].priority > cs[j].priority
		}
		return cs[i].routeID < cs[j].routeID
	})
	return cs
}

// update computes and sends one output.
func (r *Router) update(o *output, now time.Time) {
	cs := r.active(o.target, now)
	o.routeIDs = o.routeIDs[:0]
	for _, c := range cs {
		o.routeIDs = append(o.routeIDs, c.routeID)
	}
	if len(cs) == 0 {
		if t := r.targets[o.target]; o.active && t.Stop != nil {
			// The source timed out: stop rather than keep driving.
			o.last = clone(t.Stop)
			r.publishAll(t.Encode(t.Stop))
		}
		o.active, o.winner, o.blending = false, "", false
		r.release(o)
		return
	}
	vals := r.combine(o, cs, now)
	o.active = true
	o.last = vals
	if !r.hold(o) {
		return
	}
	r.send(o.target, vals)
}

// hold takes (or keeps) the motors of an output about to be sent, and
// reports whether it may be sent. During an emergency stop nothing is
// taken.
func (r *Router) hold(o *output) bool {
	if r.o.Sessions == nil || r.estop.active {
		return true // during an e-stop, send sends only stop values
	}
	if err := r.o.Sessions.Hold(o.target); errors.Is(err, ErrHoldPending) {
		o.held = true // being taken: Release cancels it
		return false
	} else if err != nil {
		o.held = false
		if o.refused != err.Error() {
			o.refused = err.Error()
			r.event("warn", fmt.Sprintf("router output %s not sent: %v", o.target, err))
		}
		return false
	}
	o.held, o.refused = true, ""
	return true
}

// release gives back an output's motors.
func (r *Router) release(o *output) {
	o.refused = ""
	if o.held {
		o.held = false
		r.o.Sessions.Release(o.target)
	}
}

// combine is the blending of docs/router.md's priority and blending.
func (r *Router) combine(o *output, cs []*contribution, now time.Time) map[string]float64 {
	vals := make(map[string]float64, len(o.last)+4)
	// A target given whole (a pose) takes only what its routes drive now.
	keep := !r.targets[o.target].Whole
	if r.blending.Mode == BlendAdditive {
		for _, c := range cs {
			for k, v := range c.values {
				vals[k] += v
			}
		}
		// Properties no active route drives keep their last value.
		for k, v := range o.last {
			if _, driven := vals[k]; !driven && keep {
				vals[k] = v
			}
		}
		o.winner = cs[0].routeID
		return vals
	}
	// Properties the winner does not drive keep their last value.
	if keep {
		for k, v := range o.last {
			vals[k] = v
		}
	}
	top := cs[0]
	for k, v := range top.values {
		vals[k] = v
	}
	if r.blending.Mode == BlendBlend && r.blending.BlendTimeMS > 0 {
		if o.active && o.winner != "" && o.winner != top.routeID {
			o.blending = true
			o.blendAt = now
			o.blendFrom = make(map[string]float64, len(o.last))
			for k, v := range o.last {
				o.blendFrom[k] = v
			}
		}
		if o.blending {
			span := time.Duration(r.blending.BlendTimeMS) * time.Millisecond
			alpha := float64(now.Sub(o.blendAt)) / float64(span)
			if alpha >= 1 {
				o.blending = false
			} else {
				for k, from := range o.blendFrom {
					if to, ok := vals[k]; ok {
						vals[k] = from + (to-from)*alpha
					}
				}
			}
		}
	}
	o.winner = top.routeID
	return vals
}

// send publishes an output's values as its target's messages. While the
// emergency stop is engaged a target with stop values is sent those, the
// others nothing.
func (r *Router) send(target string, v map[string]float64) {
	t := r.targets[target]
	if r.estop.active {
		if t.Stop == nil {
			return
		}
		v = t.Stop
	}
	r.publishAll(t.Encode(v))
}

// state is one output's state: idle with no
// active route, routing with one, blending with several or while a blend
// ramp runs.
func (o *output) state() string {
	switch {
	case !o.active:
		return msg.RouterIdle
	case len(o.routeIDs) > 1 || o.blending:
		return msg.RouterBlending
	}
	return msg.RouterRouting
}

// state is the router's state: the "highest" of its outputs'.
func (r *Router) state() string {
	st := msg.RouterIdle
	for _, t := range r.names {
		switch r.outputs[t].state() {
		case msg.RouterBlending:
			return msg.RouterBlending
		case msg.RouterRouting:
			st = msg.RouterRouting
		}
	}
	return st
}

// Status returns the current RouteStatus. Call it on the executor.
func (r *Router) Status() msg.RouteStatus {
	now := r.ex.Now()
	s := msg.RouteStatus{State: r.state(), Routes: []msg.RouteState{}, Outputs: []msg.OutputState{},
		Timestamp: unixSeconds(now), EStopActive: r.estop.active, EStopSource: r.estop.source}
	for _, rt := range r.routes {
		rs := msg.RouteState{RouteID: rt.ID, Enabled: rt.Enabled, Priority: int32(rt.EffectivePriority()),
			Source: rt.Input.Source, Target: rt.Output.Target}
		if at, ok := r.lastInput[rt.ID]; ok {
			rs.LastInput = unixSeconds(at)
			rs.Active = rt.Enabled && r.fresh(at, now)
		}
		s.Routes = append(s.Routes, rs)
	}
	for _, t := range r.names {
		o := r.outputs[t]
		outState := msg.OutputState{Target: t, State: o.state(), RouteIDs: []string{}, Values: map[string]float32{}}
		if o.active {
			outState.RouteIDs = append(outState.RouteIDs, o.routeIDs...)
		}
		for k, v := range o.last {
			outState.Values[k] = f32(v)
		}
		s.Outputs = append(s.Outputs, outState)
	}
	return s
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// statusCheckEvery is how often, at most, the router checks whether its
// RouteStatus changed (publishStatus): a change is published within this
// plus one output tick. Inputs arrive at up to hundreds a second; a person
// watching the status needs no more than 20 updates a second, and checking
// on every input cost more than routing it.
const statusCheckEvery = 50 * time.Millisecond

// publishStatus publishes RouteStatus on TopicRouterStatus when it
// changed, or StatusEvery after the last; force publishes it now. Without
// force it checks at most every statusCheckEvery: a call inside that
// window leaves the check to the output tick that ends it. (The server
// forwards that topic to WebSocket clients subscribed to "router".)
func (r *Router) publishStatus(now time.Time, force bool) {
	if !force && !r.checkedAt.IsZero() && now.Sub(r.checkedAt) < statusCheckEvery {
		return
	}
	r.checkedAt = now
	sig := r.appendSignature(r.sigBuf[:0], now)
	if !force && bytes.Equal(sig, r.lastStatus) && now.Sub(r.statusAt) < r.o.StatusEvery {
		r.sigBuf = sig
		return
	}
	// Swap the buffers: the new signature is kept, the old one's
	// memory builds the next.
	r.lastStatus, r.sigBuf = sig, r.lastStatus
	r.statusAt = now
	r.publish(msg.TopicRouterStatus, r.Status())
}

// appendSignature appends to b a summary of what RouteStatus shows apart
// from values and times, to publish it when it changes. It allocates
// nothing once b has grown to fit.
func (r *Router) appendSignature(b []byte, now time.Time) []byte {
	b = append(b, r.state()...)
	if r.estop.active {
		b = append(b, "|estop"...)
	}
	for _, t := range r.names {
		o := r.outputs[t]
		if o.active {
			b = append(b, '|')
			b = append(b, t...)
			b = append(b, '=')
			for i, id := range o.routeIDs {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, id...)
			}
		}
	}
	for _, rt := range r.routes {
		at, ok := r.lastInput[rt.ID]
		b = append(b, '|')
		b = append(b, rt.ID...)
		b = append(b, ':')
		b = strconv.AppendBool(b, rt.Enabled)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(rt.EffectivePriority()), 10)
		b = append(b, ':')
		b = strconv.AppendBool(b, ok && r.fresh(at, now))
	}
	return b
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
