package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/server/router/target"
)

// Route is one routing rule, in the format of docs/router.md: where the
// input comes from, which output it drives, and how input values become
// output properties.
type Route struct {
	ID      string `json:"id" yaml:"id"`
	Enabled bool   `json:"enabled" yaml:"enabled"`
	// Priority decides which route drives an output when several are
	// active: higher wins. 0 means the source's default (DefaultPriority).
	Priority int         `json:"priority" yaml:"priority"`
	Input    RouteInput  `json:"input" yaml:"input"`
	Output   RouteOutput `json:"output" yaml:"output"`
	// Mapping is a list of mappings, or "passthrough": the input's values
	// go to the output unchanged (WebSocket commands).
	Mapping Mapping `json:"mapping" yaml:"mapping"`
}

// RouteInput selects the inputs a route takes.
type RouteInput struct {
	Source string `json:"source" yaml:"source"` // msg.SourceRC ...
	// Subject is a LiveLink subject name ("FaceCapture"); empty takes any.
	Subject string `json:"subject,omitempty" yaml:"subject,omitempty"`
	// Type is a LiveLink subject type (msg.SubjectFace ...); empty takes any.
	Type string `json:"type,omitempty" yaml:"type,omitempty"`
	// Protocol is an RC protocol ("sbus"); empty takes any.
	Protocol string `json:"protocol,omitempty" yaml:"protocol,omitempty"`
	// CommandTypes are the commands a passthrough route forwards ("move",
	// "home"); empty forwards every command.
	CommandTypes []string `json:"command_types,omitempty" yaml:"command_types,omitempty"`
}

// RouteOutput is the output a route drives.
type RouteOutput struct {
	// Target is a routable target of Targets() ("head", "arms.left",
	// "tracks" ...), or target.Any ("*": the target each command names;
	// passthrough only).
	Target string `json:"target" yaml:"target"`
}

// Mapping is a route's "mapping": a list of Map, or passthrough.
type Mapping struct {
	Passthrough bool
	List        []Map
}

// Passthrough is the mapping value that forwards input values unchanged.
const Passthrough = "passthrough"

// MarshalJSON writes "passthrough" or the list.
func (m Mapping) MarshalJSON() ([]byte, error) {
	if m.Passthrough {
		return json.Marshal(Passthrough)
	}
	if m.List == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(m.List)
}

// UnmarshalJSON reads "passthrough" or a list of mappings.
func (m *Mapping) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != Passthrough {
			return &FieldError{Field: "mapping", Message: fmt.Sprintf("want a list of mappings or %q, got %q", Passthrough, s)}
		}
		*m = Mapping{Passthrough: true}
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &FieldError{Field: "mapping", Message: "want a list of mappings or \"passthrough\""}
	}
	list := make([]Map, len(raw))
	for i, r := range raw {
		// Strict, so that a misspelt option is an error, not ignored.
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&list[i]); err != nil {
			field := fmt.Sprintf("mapping[%d]", i)
			var te *json.UnmarshalTypeError
			switch {
			case errors.As(err, &te):
				return &FieldError{Field: field + "." + te.Field, Message: fmt.Sprintf("want %s, got %s", te.Type, te.Value)}
			case strings.HasPrefix(err.Error(), "json: unknown field "):
				name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
				return &FieldError{Field: field + "." + name, Message: "unknown mapping option"}
			}
			return &FieldError{Field: field, Message: err.Error()}
		}
	}
	*m = Mapping{List: list}
	return nil
}

// MarshalYAML writes "passthrough" or the list.
func (m Mapping) MarshalYAML() (any, error) {
	if m.Passthrough {
		return Passthrough, nil
	}
	if m.List == nil {
		return []Map{}, nil
	}
	return m.List, nil
}

// UnmarshalYAML reads "passthrough" or a list of mappings.
func (m *Mapping) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != Passthrough {
			return &FieldError{Field: "mapping", Message: fmt.Sprintf("line %d: want a list of mappings or %q, got %q", n.Line, Passthrough, n.Value)}
		}
		*m = Mapping{Passthrough: true}
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return &FieldError{Field: "mapping", Message: fmt.Sprintf("line %d: want a list of mappings or %q", n.Line, Passthrough)}
	}
	list := make([]Map, len(n.Content))
	for i, item := range n.Content {
		field := fmt.Sprintf("mapping[%d]", i)
		if item.Kind != yaml.MappingNode {
			return &FieldError{Field: field, Message: fmt.Sprintf("line %d: want a mapping object", item.Line)}
		}
		// A nested Decode does not inherit the file's strictness: check
		// the option names here, so that a misspelt one is an error.
		for k := 0; k+1 < len(item.Content); k += 2 {
			if key := item.Content[k].Value; !mapOptions[key] {
				return &FieldError{Field: field + "." + key, Message: fmt.Sprintf("line %d: unknown mapping option", item.Content[k].Line)}
			}
		}
		if err := item.Decode(&list[i]); err != nil {
			return &FieldError{Field: field, Message: err.Error()}
		}
	}
	*m = Mapping{List: list}
	return nil
}

// mapOptions are the keys of a Map.
var mapOptions = map[string]bool{"from": true, "to": true, "scale": true, "offset": true, "clamp": true,
	"deadzone": true, "curve": true, "expo": true, "mode": true, "threshold": true, "inverted": true}

// Map turns one input value into one output property. Apply gives the
// order in which the options
// act.
type Map struct {
	From string `json:"from" yaml:"from"` // input property: "channel_2", "headYaw"
	To   string `json:"to" yaml:"to"`     // output property: "pan", "linear", "joint_0"
	// Scale multiplies; absent means 1.
	Scale *float64 `json:"scale,omitempty" yaml:"scale,omitempty"`
	// Offset is added after scaling.
	Offset float64 `json:"offset,omitempty" yaml:"offset,omitempty"`
	// Clamp is [min, max], applied last.
	Clamp []float64 `json:"clamp,omitempty" yaml:"clamp,omitempty,flow"`
	// Deadzone: inputs with magnitude below it count as 0 (input units).
	Deadzone float64 `json:"deadzone,omitempty" yaml:"deadzone,omitempty"`
	// Curve is CurveLinear (default) or CurveExponential with Expo.
	Curve string `json:"curve,omitempty" yaml:"curve,omitempty"`
	// Expo is the exponential curve's strength, 0 (linear) to 1 (cubic).
	Expo float64 `json:"expo,omitempty" yaml:"expo,omitempty"`
	// Mode is ModeAnalog (default) or ModeSwitch: 1 at or above
	// Threshold, else 0.
	Mode string `json:"mode,omitempty" yaml:"mode,omitempty"`
	// Threshold is the switch point; absent means 0.5.
	Threshold *float64 `json:"threshold,omitempty" yaml:"threshold,omitempty"`
	// Inverted negates an analog input, and swaps a switch's 1 and 0.
	Inverted bool `json:"inverted,omitempty" yaml:"inverted,omitempty"`
}

// Curves and modes of a Map.
const (
	CurveLinear      = "linear"
	CurveExponential = "exponential"
	ModeAnalog       = "analog"
	ModeSwitch       = "switch"
)

// DefaultThreshold is a switch mapping's threshold when none is given.
const DefaultThreshold = 0.5

// Apply maps the input value v. Analog: negate if Inverted, zero inside
// the deadzone, the curve, then scale, offset and clamp. Switch: 1 if v
// is at or above the threshold (0 if Inverted), then scale, offset and
// clamp.
func (m *Map) Apply(v float64) float64 {
	if m.Mode == ModeSwitch {
		th := DefaultThreshold
		if m.Threshold != nil {
			th = *m.Threshold
		}
		on := v >= th
		if m.Inverted {
			on = !on
		}
		v = 0
		if on {
			v = 1
		}
	} else {
		if m.Inverted {
			v = -v
		}
		if math.Abs(v) < m.Deadzone {
			v = 0
		}
		if m.Curve == CurveExponential {
			// The RC transmitter's expo: gentle around the centre, full
			// travel at the ends (±1 maps to ±1).
			v = (1-m.Expo)*v + m.Expo*v*v*v
		}
	}
	if m.Scale != nil {
		v *= *m.Scale
	}
	v += m.Offset
	if len(m.Clamp) == 2 {
		v = math.Max(m.Clamp[0], math.Min(m.Clamp[1], v))
	}
	return v
}

// FieldError is a configuration or parameter error naming the field at
// fault ("routes[2].mapping[0].clamp") and what was expected: the
// project's field error, which the WebSocket gateway reports with its
// field.
type FieldError = fielderr.Error

func fieldErr(field, format string, args ...any) error { return fielderr.New(field, format, args...) }

// prefixed puts prefix in front of the field of a FieldError.
func prefixed(prefix string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: joinField(prefix, fe.Field), Message: fe.Message, Err: fe.Err}
	}
	return err
}

var routeID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// DefaultPriority is each source's priority when its route gives none
// (the joystick is SAINT's own addition).
func DefaultPriority(source string) int {
	switch source {
	case msg.SourceSafety:
		return 1000
	case msg.SourceRC:
		return 300
	case msg.SourceJoystick:
		return 250
	case msg.SourceWebSocket:
		return 200
	case msg.SourceROS2:
		return 150
	case msg.SourceLiveLink:
		return 100
	case msg.SourceAutonomous:
		return 50
	}
	return 0
}

// Sources lists the input sources, highest default priority first.
func Sources() []string {
	return []string{msg.SourceSafety, msg.SourceRC, msg.SourceJoystick, msg.SourceWebSocket, msg.SourceROS2, msg.SourceLiveLink, msg.SourceAutonomous}
}

// MaxPriority is the highest route priority, the safety source's.
const MaxPriority = 1000

// EffectivePriority is the route's priority, or its source's default.
func (r *Route) EffectivePriority() int {
	if r.Priority != 0 {
		return r.Priority
	}
	return DefaultPriority(r.Input.Source)
}

// Validate checks the route; the error names the field at fault.
func (r *Route) Validate() error {
	if r.ID == "" {
		return fieldErr("id", "required")
	}
	if !routeID.MatchString(r.ID) {
		return fieldErr("id", "want 1-64 letters, digits, '_', '-' or '.', got %q", r.ID)
	}
	if r.Priority < 0 || r.Priority > MaxPriority {
		return fieldErr("priority", "want 0 (the source's default) to %d, got %d", MaxPriority, r.Priority)
	}
	if r.Input.Source == "" {
		return fieldErr("input.source", "required; want one of %s", strings.Join(Sources(), ", "))
	}
	if DefaultPriority(r.Input.Source) == 0 {
		return fieldErr("input.source", "want one of %s, got %q", strings.Join(Sources(), ", "), r.Input.Source)
	}
	switch r.Input.Type {
	case "", msg.SubjectAnimation, msg.SubjectTransform, msg.SubjectFace, msg.SubjectCamera:
	default:
		return fieldErr("input.type", "want animation, transform, face or camera, got %q", r.Input.Type)
	}
	switch r.Input.Protocol {
	case "", msg.RCProtocolPWM, msg.RCProtocolPPM, msg.RCProtocolSBUS, msg.RCProtocolIBUS, msg.RCProtocolCRSF:
	default:
		return fieldErr("input.protocol", "want pwm, ppm, sbus, ibus or crsf, got %q", r.Input.Protocol)
	}
	for i, c := range r.Input.CommandTypes {
		if !knownCommand(c) {
			return fieldErr(fmt.Sprintf("input.command_types[%d]", i), "want one of %s, got %q", strings.Join(commandNames(), ", "), c)
		}
	}
	t := r.Output.Target
	if t == "" {
		return fieldErr("output.target", "required; want %s or * (passthrough)", strings.Join(TargetNames(), ", "))
	}
	var out *Target
	if t == target.Any {
		if !r.Mapping.Passthrough {
			return fieldErr("output.target", "\"*\" needs mapping \"passthrough\": a mapped route drives one target")
		}
	} else {
		var err error
		if out, err = newTargetTable().routable("output.target", t); err != nil {
			return err
		}
	}
	if r.Mapping.Passthrough {
		return nil
	}
	if len(r.Mapping.List) == 0 {
		return fieldErr("mapping", "want at least one mapping, or \"passthrough\"")
	}
	for i := range r.Mapping.List {
		if err := r.Mapping.List[i].validate(out); err != nil {
			return prefixed("mapping["+strconv.Itoa(i)+"]", err)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (m *Map) validate(target *Target) error {
	if m.From == "" {
		return fieldErr("from", "required: the input property (\"channel_2\", \"headYaw\")")
	}
	if m.To == "" {
		return fieldErr("to", "required: one of %s", strings.Join(target.PropertyNames(), ", "))
	}
	if _, ok := target.Property(m.To); !ok {
		return fieldErr("to", "%s has no property %q; want one of %s", target.Name, m.To, strings.Join(target.PropertyNames(), ", "))
	}
	if m.Scale != nil && !finite(*m.Scale) {
		return fieldErr("scale", "want a finite number")
	}
	if !finite(m.Offset) {
		return fieldErr("offset", "want a finite number")
	}
	if m.Clamp != nil {
		if len(m.Clamp) != 2 {
			return fieldErr("clamp", "want [min, max], got %d numbers", len(m.Clamp))
		}
		if !finite(m.Clamp[0]) || !finite(m.Clamp[1]) || m.Clamp[0] > m.Clamp[1] {
			return fieldErr("clamp", "want [min, max] with min <= max, got %v", m.Clamp)
		}
	}
	if m.Deadzone < 0 || !finite(m.Deadzone) {
		return fieldErr("deadzone", "want 0 or more, got %v", m.Deadzone)
	}
	switch m.Curve {
	case "", CurveLinear, CurveExponential:
	default:
		return fieldErr("curve", "want linear or exponential, got %q", m.Curve)
	}
	if m.Expo < 0 || m.Expo > 1 || !finite(m.Expo) {
		return fieldErr("expo", "want 0 to 1, got %v", m.Expo)
	}
	switch m.Mode {
	case "", ModeAnalog, ModeSwitch:
	default:
		return fieldErr("mode", "want analog or switch, got %q", m.Mode)
	}
	if m.Threshold != nil {
		if m.Mode != ModeSwitch {
			return fieldErr("threshold", "only for mode \"switch\"")
		}
		if !finite(*m.Threshold) {
			return fieldErr("threshold", "want a finite number")
		}
	}
	return nil
}

// Blending is the router's blending configuration (docs/router.md).
type Blending struct {
	// Mode is BlendPriority (default), BlendBlend or BlendAdditive.
	Mode string `json:"mode" yaml:"mode"`
	// BlendTimeMS is how long a hand-over between routes takes in blend
	// mode.
	BlendTimeMS int `json:"blend_time_ms" yaml:"blend_time_ms"`
	// SourceTimeoutMS is how long after its last input a route stops
	// counting as active.
	SourceTimeoutMS int `json:"source_timeout_ms" yaml:"source_timeout_ms"`
}

// UnmarshalJSON fills the fields given over the current ones, or over
// DefaultBlending for a fresh value, refusing unknown fields.
func (b *Blending) UnmarshalJSON(data []byte) error {
	type plain Blending
	p := plain(*b)
	if p.Mode == "" {
		p = plain(DefaultBlending())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return &FieldError{Field: te.Field, Message: fmt.Sprintf("want %s, got %s", te.Type, te.Value)}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return &FieldError{Field: name, Message: "unknown blending option; want mode, blend_time_ms or source_timeout_ms"}
		}
		return err
	}
	*b = Blending(p)
	return nil
}

// UnmarshalYAML fills the fields given over DefaultBlending, so a preset
// may give only the mode.
func (b *Blending) UnmarshalYAML(n *yaml.Node) error {
	type plain Blending
	p := plain(DefaultBlending())
	for k := 0; k+1 < len(n.Content); k += 2 {
		switch key := n.Content[k].Value; key {
		case "mode", "blend_time_ms", "source_timeout_ms":
		default:
			return &FieldError{Field: key, Message: fmt.Sprintf("line %d: unknown blending option; want mode, blend_time_ms or source_timeout_ms", n.Content[k].Line)}
		}
	}
	if err := n.Decode(&p); err != nil {
		return err
	}
	*b = Blending(p)
	return nil
}

// Blending modes.
const (
	BlendPriority = "priority" // the highest-priority active route drives the output
	BlendBlend    = "blend"    // as priority, with a ramp of blend_time_ms on each hand-over
	BlendAdditive = "additive" // active routes' values are summed
)

// DefaultBlending is priority, a 200 ms blend time and a 500 ms source
// timeout.
func DefaultBlending() Blending {
	return Blending{Mode: BlendPriority, BlendTimeMS: 200, SourceTimeoutMS: 500}
}

// Validate checks the blending configuration.
func (b *Blending) Validate() error {
	switch b.Mode {
	case BlendPriority, BlendBlend, BlendAdditive:
	default:
		return fieldErr("mode", "want priority, blend or additive, got %q", b.Mode)
	}
	if b.BlendTimeMS < 0 || b.BlendTimeMS > 60000 {
		return fieldErr("blend_time_ms", "want 0 to 60000, got %d", b.BlendTimeMS)
	}
	if b.SourceTimeoutMS < 1 || b.SourceTimeoutMS > 60000 {
		return fieldErr("source_timeout_ms", "want 1 to 60000, got %d", b.SourceTimeoutMS)
	}
	return nil
}

// Config is a routing configuration, the format of the presets in
// config/routes/ and of the router's saved state: a description, the
// blending settings and the routes.
type Config struct {
	Description string    `json:"description,omitempty" yaml:"description,omitempty"`
	Blending    *Blending `json:"blending,omitempty" yaml:"blending,omitempty"`
	Routes      []Route   `json:"routes" yaml:"routes"`
}

// Validate checks every route and that route ids are unique.
func (c *Config) Validate() error {
	if c.Blending != nil {
		if err := c.Blending.Validate(); err != nil {
			return prefixed("blending", err)
		}
	}
	seen := map[string]int{}
	for i := range c.Routes {
		if err := c.Routes[i].Validate(); err != nil {
			return prefixed("routes["+strconv.Itoa(i)+"]", err)
		}
		if j, dup := seen[c.Routes[i].ID]; dup {
			return fieldErr(fmt.Sprintf("routes[%d].id", i), "%q is already the id of routes[%d]", c.Routes[i].ID, j)
		}
		seen[c.Routes[i].ID] = i
	}
	return nil
}

// ParseConfig reads a YAML (or JSON, which is YAML) configuration and
// validates it.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if err.Error() == "EOF" {
			return &c, nil
		}
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// MarshalConfig writes c as YAML.
func MarshalConfig(c *Config) ([]byte, error) {
	return yaml.Marshal(c)
}

// sortRoutes orders routes by descending priority, then id.
func sortRoutes(rs []Route) {
	sort.SliceStable(rs, func(i, j int) bool {
		pi, pj := rs[i].EffectivePriority(), rs[j].EffectivePriority()
		if pi != pj {
			return pi > pj
		}
		return rs[i].ID < rs[j].ID
	})
}

// cloneRoute deep-copies r so callers cannot change the router's routes.
func cloneRoute(r Route) Route {
	r.Input.CommandTypes = append([]string(nil), r.Input.CommandTypes...)
	if r.Mapping.List != nil {
		list := make([]Map, len(r.Mapping.List))
		for i, m := range r.Mapping.List {
			if m.Scale != nil {
				s := *m.Scale
				m.Scale = &s
			}
			if m.Threshold != nil {
				t := *m.Threshold
				m.Threshold = &t
			}
			m.Clamp = append([]float64(nil), m.Clamp...)
			if len(m.Clamp) == 0 {
				m.Clamp = nil
			}
			list[i] = m
		}
		r.Mapping.List = list
	}
	return r
}
