package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/sim/model/balance"
)

// Scenario is a scenario file.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Duration is how long the timeline runs after the robot is ready.
	Duration Duration `yaml:"duration"`
	Seed     uint64   `yaml:"seed"`
	// Adopt lists the nodes (role keys: head, arms_left, tracks ...) adopted
	// into their roles before the timeline starts; empty means all six.
	Adopt []string `yaml:"adopt"`
	// ReadyTimeout bounds the wait for the adopted nodes to be active.
	ReadyTimeout Duration `yaml:"ready_timeout"`
	// RobotType brings the robot up from robot_config/<robot_type>/
	// (bringup): its motor groups, custom actions, role configurations
	// and simulated hardware.
	RobotType string `yaml:"robot_type"`
	// RoleConfig overrides values of the fixture role configurations,
	// by role key and dotted path ("speed_loop.kp": 0).
	RoleConfig map[string]map[string]any `yaml:"role_config"`
	Initial    Initial                   `yaml:"initial"`
	Timeline   []Event                   `yaml:"timeline"`
	Signals    []Signal                  `yaml:"signals"`
	Metrics    []Metric                  `yaml:"metrics"`
	Plots      []Plot                    `yaml:"plots"`

	// File is where the scenario was read from.
	File string `yaml:"-"`
}

// Initial is the robot's state when the timeline starts.
type Initial struct {
	Balance *BalanceState `yaml:"balance"`
	Tracks  *Pose         `yaml:"tracks"`
	// Floor replaces the friction patches under the balancing base's
	// wheels (the rest of the floor keeps μ = 1).
	Floor []FloorPatch `yaml:"floor"`
	// Bumps replaces the bumps in the floor under the balancing base
	// (none: flat).
	Bumps []Bump `yaml:"bumps"`
}

// Bump is a ridge across the floor centred at world x at (m): height (m,
// negative for a dip) over length (m), a raised cosine (see
// sim/model/balance.Bump).
type Bump struct {
	At     float64 `yaml:"at"`
	Height float64 `yaml:"height"`
	Length float64 `yaml:"length"`
}

// balanceBumps converts a scenario's bumps to the model's.
func balanceBumps(bumps []Bump) []balance.Bump {
	out := make([]balance.Bump, len(bumps))
	for i, bp := range bumps {
		out[i] = balance.Bump{At: bp.At, Height: bp.Height, Length: bp.Length}
	}
	return out
}

// FloorPatch is a strip of floor from ≤ x < to (world metres) with
// friction coefficient mu.
type FloorPatch struct {
	From float64 `yaml:"from"`
	To   float64 `yaml:"to"`
	Mu   float64 `yaml:"mu"`
}

// BalanceState is the balancing base's body pitch, degrees (forward
// positive), and pitch rate, degrees per second, and optionally where its
// axle stands on the floor (m) and its heading (degrees, 0 along world x,
// 90 along y): the friction patches and bumps run across world x, so a
// base turned along them can have one wheel on a patch and the other off.
// Pose keys left out keep the base's present value.
type BalanceState struct {
	PitchDeg     float64  `yaml:"pitch_deg"`
	PitchRateDeg float64  `yaml:"pitch_rate_deg"`
	X            *float64 `yaml:"x"`
	Y            *float64 `yaml:"y"`
	HeadingDeg   *float64 `yaml:"heading_deg"`
}

// Pose places the tracked base in the world (m, degrees).
type Pose struct {
	X          float64 `yaml:"x"`
	Y          float64 `yaml:"y"`
	HeadingDeg float64 `yaml:"heading_deg"`
}

// Event is one timeline entry: at a time after the start, exactly one
// input or fault.
type Event struct {
	At Duration `yaml:"at"`
	// Every repeats the event at this period until Until (inclusive), as a
	// joystick client resends its drive command.
	Every Duration `yaml:"every"`
	Until Duration `yaml:"until"`
	// WS is a WebSocket request, sent as a client would (type, target,
	// action, params); Expect is the status it must get, "ok" by default.
	WS     map[string]any `yaml:"ws"`
	Expect string         `yaml:"expect"`
	// RC moves the transmitter's sticks and switches.
	RC *RCInput `yaml:"rc"`
	// Push applies a force to a body of the physics world.
	Push *Push `yaml:"push"`
	// Disturb is any disturbance of sim/world (kind, target, force,
	// impulse, duration_s), as /saint/sim/disturb takes it.
	Disturb map[string]any `yaml:"disturb"`
	// Fault is a fault of the system rather than of the physics.
	Fault *Fault `yaml:"fault"`
	// Publish puts a message on the bus as the server would.
	Publish *Publish `yaml:"publish"`
	// GPIO drives an input pin of a node's board from outside, as a
	// button or a switch wired to it would.
	GPIO *GPIOInput `yaml:"gpio"`
	// BalanceIO works the balance base's IO board: its arming button,
	// kill switch and the two RC links.
	BalanceIO *BalanceIO `yaml:"balance_io"`
	// CAN sends a frame on a node's CAN bus, as another controller on it
	// (the Orin) would.
	CAN *CANFrame `yaml:"can"`
	// Call calls a bus service (the balance debug console ...); the
	// reply must hold ExpectReply's fields.
	Call        *Call          `yaml:"call"`
	ExpectReply map[string]any `yaml:"expect_reply"`
	// Set puts the robot in a state in mid-run, as initial does at the
	// start.
	Set *Initial `yaml:"set"`

	line int
}

// RCInput sets the transmitter: power (on: frames flow; off: the link is
// lost), stick positions (-1…1) and switches by channel number.
type RCInput struct {
	Power    *bool           `yaml:"power"`
	Sticks   map[int]float64 `yaml:"sticks"`
	Switches map[int]bool    `yaml:"switches"`
}

// Push is a force (N, world frame: x forward, y left, z up) on a body for
// a time.
type Push struct {
	Body     string     `yaml:"body"`
	Force    [3]float64 `yaml:"force"`
	Duration Duration   `yaml:"duration"`
}

// Fault is one of: a node stopped (its role brings the actuators to a safe
// state and it stops), a node's process restarted (it comes back in its
// stored role with no motor session), a node cut off the bus or
// reconnected, the server cut off the bus or reconnected, the RC
// transmitter's link lost or back.
type Fault struct {
	NodeStop    string `yaml:"node_stop"`
	NodeRestart string `yaml:"node_restart"`
	NodeCut     string `yaml:"node_cut"`
	NodeRejoin  string `yaml:"node_rejoin"`
	ServerCut   *bool  `yaml:"server_cut"`
	RCLoss      *bool  `yaml:"rc_loss"`
}

// GPIOInput sets an input pin of a node's board (role key or node id) to
// a level, "low" or "high"; a button to ground pressed is low.
type GPIOInput struct {
	Node  string `yaml:"node"`
	Pin   int    `yaml:"pin"`
	Level string `yaml:"level"`
}

// BalanceIO is one action on the balance base's IO board: ArmButton
// presses (true) or lets go of (false) the arming button, KillOpen opens
// (true) or closes the kill switch, Channels puts RC channels (1-based) at
// pulse widths in µs on both transmitters (5 ARM switch, 6 ESTOP, 7 speed
// limit: above 1500 µs is on), CRSFLost and ELRSLost lose or restore each
// link. PowerOff switches the IO board off for good: its link to the
// balance board goes silent.
type BalanceIO struct {
	PowerOff  bool           `yaml:"power_off"`
	ArmButton *bool          `yaml:"arm_button"`
	KillOpen  *bool          `yaml:"kill_open"`
	Channels  map[int]uint16 `yaml:"channels"`
	CRSFLost  *bool          `yaml:"crsf_lost"`
	ELRSLost  *bool          `yaml:"elrs_lost"`
}

// CANFrame is a standard-identifier CAN frame for a node's bus.
type CANFrame struct {
	Node string `yaml:"node"`
	Bus  string `yaml:"bus"`
	ID   uint32 `yaml:"id"`
	Data []byte `yaml:"data"`
}

// Call is a request to a bus service.
type Call struct {
	Service string         `yaml:"service"`
	Request map[string]any `yaml:"request"`
}

// Publish is a message published on the bus from the server's side.
type Publish struct {
	Topic   string         `yaml:"topic"`
	Message map[string]any `yaml:"message"`
}

// Signal is a recorded time series: a number taken from every message on a
// topic by a path into its JSON ("angles.0", "pose.position.x"), times
// Scale (default 1) plus Offset.
type Signal struct {
	Name   string  `yaml:"name"`
	Topic  string  `yaml:"topic"`
	Field  string  `yaml:"field"`
	Scale  float64 `yaml:"scale"`
	Offset float64 `yaml:"offset"`
	// Abs records the magnitude.
	Abs bool `yaml:"abs"`
	// Equals turns a text field into 1 when it equals this, else 0
	// (state names, sources).
	Equals string `yaml:"equals"`
}

// Metric is a number computed from signals and the tolerance it must meet:
// Max and/or Min bound the value.
type Metric struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind"`
	// Signal is the main signal; Signals the ones some kinds take several
	// of (latency: all must be within Threshold; path_error and
	// odometry_drift: x, y and for drift the reference x, y).
	Signal  string   `yaml:"signal"`
	Signals []string `yaml:"signals"`
	// From and To bound the window (default: the whole timeline).
	From Duration  `yaml:"from"`
	To   *Duration `yaml:"to"`
	// Target is the set point for overshoot, settling_time and final.
	Target *float64 `yaml:"target"`
	// Band is the settling band around Target (absolute).
	Band float64 `yaml:"band"`
	// Threshold is latency's "stopped" level.
	Threshold float64 `yaml:"threshold"`
	// Path is path_error's reference polyline of [x, y] points.
	Path [][2]float64 `yaml:"path"`
	Max  *float64     `yaml:"max"`
	Min  *float64     `yaml:"min"`
}

// Plot is one PNG: signals against time.
type Plot struct {
	File    string   `yaml:"file"`
	Title   string   `yaml:"title"`
	XLabel  string   `yaml:"x_label"`
	YLabel  string   `yaml:"y_label"`
	Signals []string `yaml:"signals"`
	// XY plots the first signal against the second (a path) instead of
	// against time.
	XY bool `yaml:"xy"`
}

// Metric kinds.
const (
	KindOvershoot     = "overshoot"
	KindSettlingTime  = "settling_time"
	KindMaxAbs        = "max_abs"
	KindFinal         = "final"
	KindPathError     = "path_error"
	KindOdometryDrift = "odometry_drift"
	KindLatency       = "latency"
	KindMin           = "min"
	KindMax           = "max"
	KindChange        = "change"
)

// Kinds lists the metric kinds.
func Kinds() []string {
	return []string{KindOvershoot, KindSettlingTime, KindMaxAbs, KindFinal, KindPathError, KindOdometryDrift, KindLatency, KindMin, KindMax, KindChange}
}

// Duration is a time.Duration written "1.5s", "200ms" (or a number of
// seconds) in a scenario.
type Duration time.Duration

// D returns it as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 1.5s or 200ms", n.Line)
	}
	if s, err := strconv.ParseFloat(n.Value, 64); err == nil {
		*d = Duration(s * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (1.5s, 200ms)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration in seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(d).Seconds(), 'f', -1, 64)), nil
}

// ReadFile reads and checks a scenario file.
func ReadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc.File = path
	return sc, nil
}

// Parse decodes a scenario, refusing unknown keys, and checks it. Errors
// name the line and the field.
func Parse(data []byte) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, err
	}
	lines := eventLines(&root)
	for i := range sc.Timeline {
		if i < len(lines) {
			sc.Timeline[i].line = lines[i]
		}
	}
	if err := sc.check(&root); err != nil {
		return nil, err
	}
	sc.Timeline = expand(sc.Timeline)
	return &sc, nil
}

// eventLines returns the line of each timeline entry.
func eventLines(root *yaml.Node) []int {
	n := lookup(root, "timeline")
	if n == nil {
		return nil
	}
	var out []int
	for _, e := range n.Content {
		out = append(out, e.Line)
	}
	return out
}

// lookup finds a key of the document's top-level mapping.
func lookup(root *yaml.Node, key string) *yaml.Node {
	if root == nil || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// lineOf returns the line of the i-th item of a top-level sequence.
func lineOf(root *yaml.Node, key string, i int) int {
	n := lookup(root, key)
	if n == nil || i >= len(n.Content) {
		return 0
	}
	return n.Content[i].Line
}

// check validates the scenario section by section and reports every
// problem found, each with its line and field.
func (sc *Scenario) check(root *yaml.Node) error {
	c := &checker{sc: sc, root: root, signals: map[string]bool{}}
	if sc.Name == "" {
		c.bad(1, "name", "missing")
	}
	if sc.Duration <= 0 {
		c.bad(1, "duration", "want a positive duration such as 5s")
	}
	initialLine := 0
	if n := lookup(root, "initial"); n != nil {
		initialLine = n.Line
	}
	c.world(initialLine, "initial", sc.Initial.Floor, sc.Initial.Bumps, sc.Initial.Balance)
	c.checkSignals()
	for i, e := range sc.Timeline {
		c.event(fmt.Sprintf("timeline[%d]", i), e)
	}
	for i, m := range sc.Metrics {
		c.metric(i, m)
	}
	c.plots()
	return errors.Join(c.errs...)
}

// checker collects a scenario's problems in the order they are found.
type checker struct {
	sc      *Scenario
	root    *yaml.Node
	errs    []error
	signals map[string]bool // the signals defined
	metrics map[string]bool // the metric names defined
}

func (c *checker) bad(line int, field, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("line %d: %s: %s", line, field, fmt.Sprintf(format, args...)))
}

// world checks what a scenario sets of the simulated world, at the start
// (initial) or in a set event: floor patches, bumps and balance state.
func (c *checker) world(line int, field string, floor []FloorPatch, bumps []Bump, st *BalanceState) {
	for i, pt := range floor {
		f := fmt.Sprintf("%s.floor[%d]", field, i)
		switch {
		case math.IsNaN(pt.From) || math.IsInf(pt.From, 0) || math.IsNaN(pt.To) || math.IsInf(pt.To, 0) || pt.From >= pt.To:
			c.bad(line, f, "want finite from < to (metres along the floor's x), got %g–%g", pt.From, pt.To)
		case !(pt.Mu >= 0) || math.IsInf(pt.Mu, 0):
			c.bad(line, f+".mu", "want a friction coefficient ≥ 0, got %g", pt.Mu)
		}
	}
	if err := balance.ValidBumps(balanceBumps(bumps), balance.Default().WheelRadius); err != nil {
		c.errs = append(c.errs, fmt.Errorf("line %d: %s.%v", line, field, err))
	}
	if st == nil {
		return
	}
	for _, v := range []struct {
		key string
		val *float64
	}{{"pitch_deg", &st.PitchDeg}, {"pitch_rate_deg", &st.PitchRateDeg}, {"x", st.X}, {"y", st.Y}, {"heading_deg", st.HeadingDeg}} {
		if v.val != nil && (math.IsNaN(*v.val) || math.IsInf(*v.val, 0)) {
			c.bad(line, field+".balance."+v.key, "want a finite number, got %g", *v.val)
		}
	}
}

// checkSignals checks the signals section and records the names defined.
func (c *checker) checkSignals() {
	for i, s := range c.sc.Signals {
		f := fmt.Sprintf("signals[%d]", i)
		line := lineOf(c.root, "signals", i)
		switch {
		case s.Name == "":
			c.bad(line, f+".name", "missing")
		case c.signals[s.Name]:
			c.bad(line, f+".name", "%q is defined twice", s.Name)
		}
		c.signals[s.Name] = true
		if !strings.HasPrefix(s.Topic, "/") {
			c.bad(line, f+".topic", "want a bus topic such as /saint/sim/truth/head, got %q", s.Topic)
		}
		if s.Field == "" {
			c.bad(line, f+".field", "missing: a path into the message's JSON such as angles.0")
		}
	}
}

// event checks one timeline event: its timing, then what it does.
func (c *checker) event(f string, e Event) {
	n := 0
	for _, set := range []bool{e.WS != nil, e.RC != nil, e.Push != nil, e.Disturb != nil, e.Fault != nil, e.Publish != nil, e.GPIO != nil, e.BalanceIO != nil, e.CAN != nil, e.Call != nil, e.Set != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		c.bad(e.line, f, "want exactly one of ws, rc, push, disturb, fault, publish, gpio, balance_io, can, call, set; got %d", n)
	}
	c.eventTiming(f, e)
	if e.Set != nil {
		c.world(e.line, f+".set", e.Set.Floor, e.Set.Bumps, e.Set.Balance)
	}
	c.eventAction(f, e)
}

// eventTiming checks when an event happens and how it repeats.
func (c *checker) eventTiming(f string, e Event) {
	sc := c.sc
	if e.At < 0 || e.At > sc.Duration {
		c.bad(e.line, f+".at", "%v is outside the scenario's 0–%v", e.At.D(), sc.Duration.D())
	}
	if e.Every < 0 || e.Every > 0 && e.Until < e.At || e.Every == 0 && e.Until != 0 {
		c.bad(e.line, f+".every", "a repeated event needs every > 0 and until at or after at")
	}
	if e.Every > 0 && e.Every < Duration(time.Millisecond) {
		c.bad(e.line, f+".every", "%v is shorter than 1ms", e.Every.D())
	}
	if e.Until > sc.Duration {
		c.bad(e.line, f+".until", "%v is after the scenario's end %v", e.Until.D(), sc.Duration.D())
	}
}

// eventAction checks the fields of the one thing an event does.
func (c *checker) eventAction(f string, e Event) {
	if e.ExpectReply != nil && e.Call == nil {
		c.bad(e.line, f+".expect_reply", "only a call event has an expected reply")
	}
	if can := e.CAN; can != nil && (can.Node == "" || can.Bus == "" || can.ID > 0x7FF || len(can.Data) > 8) {
		c.bad(e.line, f+".can", "want node, bus, a standard id (≤ 0x7FF) and at most 8 data bytes")
	}
	if call := e.Call; call != nil && !strings.HasPrefix(call.Service, "/") {
		c.bad(e.line, f+".call.service", "want a bus service such as /saint/balance/console, got %q", call.Service)
	}
	if e.Expect != "" && e.WS == nil {
		c.bad(e.line, f+".expect", "only a ws event has an expected status")
	}
	if e.Fault != nil {
		k := 0
		for _, set := range []bool{e.Fault.NodeStop != "", e.Fault.NodeRestart != "", e.Fault.NodeCut != "", e.Fault.NodeRejoin != "", e.Fault.ServerCut != nil, e.Fault.RCLoss != nil} {
			if set {
				k++
			}
		}
		if k != 1 {
			c.bad(e.line, f+".fault", "want exactly one of node_stop, node_restart, node_cut, node_rejoin, server_cut, rc_loss")
		}
	}
	if g := e.GPIO; g != nil && (g.Level != "low" && g.Level != "high" || g.Pin < 0 || g.Pin > 27 || g.Node == "") {
		c.bad(e.line, f+".gpio", "want node, pin (BCM 0–27) and level low or high")
	}
	if e.Publish != nil && !strings.HasPrefix(e.Publish.Topic, "/") {
		c.bad(e.line, f+".publish.topic", "want a bus topic, got %q", e.Publish.Topic)
	}
}

// metric checks the i-th metric: its name, kind, tolerance and what its
// kind needs.
func (c *checker) metric(i int, m Metric) {
	if c.metrics == nil {
		c.metrics = map[string]bool{}
	}
	f := fmt.Sprintf("metrics[%d]", i)
	line := lineOf(c.root, "metrics", i)
	if m.Name == "" || c.metrics[m.Name] {
		c.bad(line, f+".name", "missing or defined twice")
	}
	c.metrics[m.Name] = true
	if !slices.Contains(Kinds(), m.Kind) {
		c.bad(line, f+".kind", "%q is not one of %s", m.Kind, strings.Join(Kinds(), ", "))
	}
	if m.Max == nil && m.Min == nil {
		c.bad(line, f, "needs a tolerance: max, min or both")
	}
	for _, s := range append([]string{m.Signal}, m.Signals...) {
		if s != "" && !c.signals[s] {
			c.bad(line, f, "signal %q is not among signals", s)
		}
	}
	need := func(cond bool, field, what string) {
		if !cond {
			c.bad(line, f+"."+field, "%s needs %s", m.Kind, what)
		}
	}
	switch m.Kind {
	case KindFinal:
		need(m.Signal != "", "signal", "a signal")
	case KindOvershoot, KindSettlingTime:
		need(m.Signal != "", "signal", "a signal")
		need(m.Target != nil, "target", "a target")
		if m.Kind == KindSettlingTime {
			need(m.Band > 0, "band", "a positive band")
		}
	case KindMaxAbs, KindMin, KindMax, KindChange:
		need(m.Signal != "", "signal", "a signal")
	case KindLatency:
		need(m.Signal != "" || len(m.Signals) > 0, "signals", "the signals that must come to rest")
		need(m.Threshold > 0, "threshold", "a positive threshold")
	case KindPathError:
		need(len(m.Signals) == 2, "signals", "two signals, x and y")
		need(len(m.Path) >= 2, "path", "a reference path of at least two points")
	case KindOdometryDrift:
		need(len(m.Signals) == 4, "signals", "four signals: x and y measured, x and y true")
	}
}

// plots checks the plots section.
func (c *checker) plots() {
	for i, p := range c.sc.Plots {
		f := fmt.Sprintf("plots[%d]", i)
		line := lineOf(c.root, "plots", i)
		if !strings.HasSuffix(p.File, ".png") || strings.ContainsAny(p.File, `/\`) {
			c.bad(line, f+".file", "want a file name ending in .png, got %q", p.File)
		}
		if len(p.Signals) == 0 || p.XY && len(p.Signals)%2 != 0 {
			c.bad(line, f+".signals", "want signals to plot (pairs x, y for an xy plot)")
		}
		for _, s := range p.Signals {
			if !c.signals[s] {
				c.bad(line, f+".signals", "signal %q is not among signals", s)
			}
		}
	}
}

// expand turns repeated events into one event per repetition.
func expand(events []Event) []Event {
	var out []Event
	for _, e := range events {
		if e.Every <= 0 {
			out = append(out, e)
			continue
		}
		for t := e.At; t <= e.Until; t += e.Every {
			r := e
			r.At, r.Every, r.Until = t, 0, 0
			out = append(out, r)
		}
	}
	return out
}
