package livelink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/saint-os/saint/bus/msg"
)

// SAINT LiveLink JSON: a source opens a TCP connection to the data port
// and writes one JSON object per line (newline-delimited JSON). The
// version field is JSONVersion; docs/livelink.md has the schema and
// examples.

// JSONVersion is the "v" of every frame this receiver reads.
const JSONVersion = 1

// DefaultDataPort and DefaultDiscoveryPort are the LiveLink ports the
// server listens on unless its settings say otherwise.
const (
	DefaultDiscoveryPort = 54321
	DefaultDataPort      = 54322
)

// Limits of the JSON protocol, per frame.
const (
	// MaxJSONFrame is the longest line accepted, newline included.
	MaxJSONFrame = 64 << 10
	// MaxProperties is the most properties one frame may carry.
	MaxProperties = 1024
	// MaxNameLength bounds subject and property names, in bytes.
	MaxNameLength = 128
)

// JSONFrame is one line of the data port. Properties come either as two
// parallel arrays, Names and Values (bone or blend shape names, in the
// sender's order), or as the Properties object; not both.
type JSONFrame struct {
	Version int    `json:"v"`
	Subject string `json:"subject"`
	Type    string `json:"type"`
	// Frame is the sender's frame number; optional (0).
	Frame uint64 `json:"frame"`
	// Time is the sender's timestamp, seconds; optional. The receiver
	// stamps frames with its own clock on arrival.
	Time       float64            `json:"time,omitempty"`
	Names      []string           `json:"names,omitempty"`
	Values     []float64          `json:"values,omitempty"`
	Properties map[string]float64 `json:"properties,omitempty"`
	// Transform is for transform and camera subjects: translation in
	// metres, rotation as a unit quaternion.
	Transform *JSONTransform `json:"transform,omitempty"`
	// FOV is a camera's horizontal field of view, degrees; it becomes the
	// "fov" property.
	FOV *float64 `json:"fov,omitempty"`
}

// JSONTransform is a frame's transform.
type JSONTransform struct {
	Translation [3]float64 `json:"translation"` // x, y, z
	Rotation    [4]float64 `json:"rotation"`    // x, y, z, w
}

// DecodeJSONFrame decodes and checks one line of the data port. Unknown
// fields are refused, so a typo names itself rather than being ignored.
func DecodeJSONFrame(line []byte) (JSONFrame, error) {
	var f JSONFrame
	if len(line) > MaxJSONFrame {
		return f, &FieldError{Field: "frame", Message: fmt.Sprintf("want at most %d bytes, got %d", MaxJSONFrame, len(line))}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return JSONFrame{}, &FieldError{Field: ute.Field, Message: fmt.Sprintf("want %s, got JSON %s", ute.Type, ute.Value), Err: err}
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if n, qerr := strconv.Unquote(name); qerr == nil {
				return JSONFrame{}, &FieldError{Field: n, Message: "unknown field", Err: err}
			}
		}
		return JSONFrame{}, &FieldError{Field: "frame", Message: "not a JSON object: " + err.Error(), Err: err}
	}
	if dec.More() {
		return JSONFrame{}, &FieldError{Field: "frame", Message: "want one JSON object per line, got more"}
	}
	return f, f.check()
}

func (f *JSONFrame) check() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if f.Version != JSONVersion {
		return bad("v", "want %d, got %d", JSONVersion, f.Version)
	}
	if err := checkName("subject", f.Subject); err != nil {
		return err
	}
	switch f.Type {
	case msg.SubjectAnimation, msg.SubjectTransform, msg.SubjectFace, msg.SubjectCamera:
	default:
		return bad("type", "want animation, transform, face or camera, got %q", f.Type)
	}
	if f.Properties != nil && (f.Names != nil || f.Values != nil) {
		return bad("properties", "send either properties or names and values, not both")
	}
	if len(f.Names) != len(f.Values) {
		return bad("values", "want one value per name (%d), got %d", len(f.Names), len(f.Values))
	}
	if n := len(f.Names) + len(f.Properties); n > MaxProperties {
		return bad("names", "want at most %d properties, got %d", MaxProperties, n)
	}
	seen := make(map[string]bool, len(f.Names))
	for i, n := range f.Names {
		field := fmt.Sprintf("names[%d]", i)
		if err := checkName(field, n); err != nil {
			return err
		}
		if seen[n] {
			return bad(field, "%q appears twice", n)
		}
		seen[n] = true
		if err := checkNumber(fmt.Sprintf("values[%d]", i), f.Values[i]); err != nil {
			return err
		}
	}
	for n, v := range f.Properties {
		if err := checkName("properties", n); err != nil {
			return err
		}
		if err := checkNumber("properties."+n, v); err != nil {
			return err
		}
	}
	if math.IsNaN(f.Time) || math.IsInf(f.Time, 0) {
		return bad("time", "want a finite number")
	}
	needsTransform := f.Type == msg.SubjectTransform || f.Type == msg.SubjectCamera
	switch {
	case needsTransform && f.Transform == nil:
		return bad("transform", "a %s subject needs a transform", f.Type)
	case !needsTransform && f.Transform != nil:
		return bad("transform", "a %s subject has no transform", f.Type)
	case f.FOV != nil && f.Type != msg.SubjectCamera:
		return bad("fov", "only a camera subject has a field of view")
	}
	if f.FOV != nil && (!(*f.FOV > 0) || *f.FOV >= 180) {
		return bad("fov", "want degrees in (0, 180), got %v", *f.FOV)
	}
	if t := f.Transform; t != nil {
		for i, v := range t.Translation {
			if err := checkNumber(fmt.Sprintf("transform.translation[%d]", i), v); err != nil {
				return err
			}
		}
		var n2 float64
		for i, v := range t.Rotation {
			if err := checkNumber(fmt.Sprintf("transform.rotation[%d]", i), v); err != nil {
				return err
			}
			n2 += v * v
		}
		if math.Abs(math.Sqrt(n2)-1) > 0.01 {
			return bad("transform.rotation", "want a unit quaternion [x, y, z, w], got length %.3f", math.Sqrt(n2))
		}
	}
	return nil
}

func checkName(field, s string) error {
	switch {
	case s == "":
		return &FieldError{Field: field, Message: "want a name, got an empty string"}
	case len(s) > MaxNameLength:
		return &FieldError{Field: field, Message: fmt.Sprintf("want at most %d bytes, got %d", MaxNameLength, len(s))}
	case !utf8.ValidString(s):
		return &FieldError{Field: field, Message: "want UTF-8 text"}
	}
	return nil
}

func checkNumber(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
		return &FieldError{Field: field, Message: fmt.Sprintf("want a finite 32-bit number, got %v", v)}
	}
	return nil
}

// LiveLinkFrame turns a checked JSON frame into the router's frame,
// stamped with the arrival time (seconds since the Unix epoch). Properties
// given as an object are sorted by name; a camera's FOV is the "fov"
// property; face subjects get the other spelling of ARKit names.
func (f *JSONFrame) LiveLinkFrame(arrival float64, aliases map[string]string) msg.LiveLinkFrame {
	out := msg.LiveLinkFrame{
		SubjectName: f.Subject, SubjectType: f.Type, FrameNumber: f.Frame, Timestamp: arrival,
		PropertyNames:  make([]string, 0, len(f.Names)+len(f.Properties)+1),
		PropertyValues: make([]float32, 0, len(f.Names)+len(f.Properties)+1),
	}
	for i, n := range f.Names {
		out.PropertyNames = append(out.PropertyNames, n)
		out.PropertyValues = append(out.PropertyValues, float32(f.Values[i]))
	}
	names := make([]string, 0, len(f.Properties))
	for n := range f.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out.PropertyNames = append(out.PropertyNames, n)
		out.PropertyValues = append(out.PropertyValues, float32(f.Properties[n]))
	}
	if f.FOV != nil {
		out.PropertyNames = append(out.PropertyNames, "fov")
		out.PropertyValues = append(out.PropertyValues, float32(*f.FOV))
	}
	out.Transform.Rotation.W = 1
	if t := f.Transform; t != nil {
		out.Transform = msg.Transform{
			Translation: msg.Vector3{X: t.Translation[0], Y: t.Translation[1], Z: t.Translation[2]},
			Rotation:    msg.Quaternion{X: t.Rotation[0], Y: t.Rotation[1], Z: t.Rotation[2], W: t.Rotation[3]},
		}
	}
	if f.Type == msg.SubjectFace {
		addARKitAliases(&out, aliases)
	}
	return out
}
