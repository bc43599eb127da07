package msg

import (
	"math"
	"sort"
)

// LimitsTopic is where the motion role under prefix ("/saint/head",
// "/saint/arms/left", "/saint/tracks") publishes the CommandLimits its
// commands are clamped to: "/saint/head/limits".
func LimitsTopic(prefix string) string { return prefix + "/limits" }

// CommandLimits is what a motion role clamps its commands to, in the
// router's property names and units (degrees, m/s, rad/s). The role
// publishes it when it starts and then every second, so that whoever sends
// it commands (the server's WebSocket motion commands) can say which
// values the role will cut, and to what (Apply), without waiting for the
// role to act. It has no .msg file in ros2/saint_os.
type CommandLimits struct {
	Header Header `json:"header"`
	// Fields are the per-value ranges ("pan", "joint_2", "linear").
	Fields []FieldLimit `json:"fields"`
	// MaxTrackSpeed (m/s), when set, caps the speed of either track of a
	// tracked base: |linear| + |angular|·HalfGauge + TurnSlip. A command
	// over it has linear and angular scaled down together.
	MaxTrackSpeed float64 `json:"max_track_speed,omitempty"`
	HalfGauge     float64 `json:"half_gauge,omitempty"` // metres
	TurnSlip      float64 `json:"turn_slip,omitempty"`  // m/s
}

// FieldLimit is the range [Min, Max] a command value is clamped to.
type FieldLimit struct {
	Field string  `json:"field"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// Clamp is one command value a role cut to its limits: the value asked
// for and the value it applies.
type Clamp struct {
	Field     string  `json:"field"`
	Requested float64 `json:"requested"`
	Applied   float64 `json:"applied"`
}

// Limit returns the range of field.
func (l *CommandLimits) Limit(field string) (FieldLimit, bool) {
	for _, f := range l.Fields {
		if f.Field == field {
			return f, true
		}
	}
	return FieldLimit{}, false
}

// Clamp returns v within field's range (v itself for a field without one).
func (l *CommandLimits) Clamp(field string, v float64) float64 {
	if f, ok := l.Limit(field); ok {
		return math.Max(f.Min, math.Min(f.Max, v))
	}
	return v
}

// ClampTwist is what a tracked base does with a velocity command: linear
// (m/s) and angular (rad/s) each clamped to its range, then both scaled
// down together if a track would have to run faster than MaxTrackSpeed,
// so that it runs at MaxTrackSpeed.
func (l *CommandLimits) ClampTwist(linear, angular float64) (float64, float64) {
	v, w := l.Clamp("linear", linear), l.Clamp("angular", angular)
	if l.MaxTrackSpeed > 0 {
		// The turn slip does not scale with the command: the scale is
		// what brings the rest within the speed left beside it.
		if need := math.Abs(v) + math.Abs(w)*l.HalfGauge; need+l.TurnSlip > l.MaxTrackSpeed {
			k := math.Max(0, l.MaxTrackSpeed-l.TurnSlip) / need
			v, w = v*k, w*k
		}
	}
	return v, w
}

// Apply reports which of the command values vals (property → value) the
// role clamps, with the value it applies, in field order. NaN values are
// left out: roles refuse them rather than clamp them.
func (l *CommandLimits) Apply(vals map[string]float64) []Clamp {
	applied := make(map[string]float64, len(vals))
	for k, v := range vals {
		if !math.IsNaN(v) {
			applied[k] = l.Clamp(k, v)
		}
	}
	if l.MaxTrackSpeed > 0 {
		_, okL := applied["linear"]
		_, okA := applied["angular"]
		if okL || okA {
			v, w := l.ClampTwist(vals["linear"], vals["angular"])
			if okL {
				applied["linear"] = v
			}
			if okA {
				applied["angular"] = w
			}
		}
	}
	var out []Clamp
	for k, a := range applied {
		// Limits travel as JSON and values as float32 on the way to
		// some roles: a difference below that precision is no clamp.
		if r := vals[k]; math.Abs(a-r) > 1e-6*math.Max(1, math.Abs(r)) {
			out = append(out, Clamp{Field: k, Requested: r, Applied: a})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}
