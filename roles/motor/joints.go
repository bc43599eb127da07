package motor

import (
	"errors"
	"fmt"
	"math"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/roleconfig"
)

// Joints is a joint control table: the pi-plus joints.yaml. Index i of
// every list is joint i.
type Joints struct {
	Name               string
	DOFs               int
	SupportsKinematics bool
	// MaxPower is the largest electrical power (W) the joints may draw for
	// longer than MaxPowerDuration (s).
	MaxPower         float64
	MaxPowerDuration float64

	JointNames []string
	// MapIndex is the motor id of each joint (the Feetech servo id).
	MapIndex []int
	// Direction is +1 or −1: the motor's sense relative to the URDF's.
	Direction []int
	// Lower and Upper clamp commanded positions (rad, URDF frame).
	Lower, Upper []float64
	// Kp and Kd are the default gains of position control.
	Kp, Kd []float64
	// URDFOffset is the URDF angle at the motor's zero (rad).
	URDFOffset []float64
}

// ToURDF converts joint i's motor angle to the URDF frame.
func (j *Joints) ToURDF(i int, motor float64) float64 {
	return float64(j.Direction[i])*motor + j.URDFOffset[i]
}

// ToMotor converts joint i's URDF angle to the motor's.
func (j *Joints) ToMotor(i int, urdf float64) float64 {
	return float64(j.Direction[i]) * (urdf - j.URDFOffset[i])
}

// Clamp limits a URDF angle of joint i to [Lower, Upper].
func (j *Joints) Clamp(i int, q float64) float64 {
	return math.Max(j.Lower[i], math.Min(j.Upper[i], q))
}

// Index returns the joint index of motor id, or −1.
func (j *Joints) Index(motorID int) int {
	for i, id := range j.MapIndex {
		if id == motorID {
			return i
		}
	}
	return -1
}

// ParseError is a joints.yaml error: the line and field at fault.
type ParseError struct {
	Line  int    // 1-based; 0 when the whole document is at fault
	Field string // "kp", "map_index[2]" ...
	Msg   string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("joints.yaml: %s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("joints.yaml:%d: %s: %s", e.Line, e.Field, e.Msg)
}

// ParseJoints decodes and validates a joints.yaml. Errors are *ParseError
// naming the line and the field.
func ParseJoints(data []byte) (*Joints, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml's message carries the line: "yaml: line 4: ...".
		return nil, &ParseError{Field: "document", Msg: err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &ParseError{Field: "document", Msg: "empty: expected a mapping with joint_names, map_index ..."}
	}
	return JointsFromNode(doc.Content[0])
}

// JointsFromNode decodes a joints table from a YAML mapping node (a whole
// joints.yaml, or a section of a role configuration holding one).
func JointsFromNode(n *yaml.Node) (*Joints, error) {
	if n.Kind != yaml.MappingNode {
		return nil, &ParseError{Line: n.Line, Field: "document", Msg: "expected a mapping with joint_names, map_index ..."}
	}
	p := parser{fields: map[string]*yaml.Node{}, keyLine: map[string]int{}, top: n.Line}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := p.fields[k.Value]; dup {
			return nil, &ParseError{Line: k.Line, Field: k.Value, Msg: "given twice"}
		}
		if !knownField[k.Value] {
			return nil, &ParseError{Line: k.Line, Field: k.Value, Msg: "unknown field (known: name, dofs, supports_kinematics, max_power, max_power_duration, joint_names, map_index, direction, lower, upper, kp, kd, urdf_offset)"}
		}
		p.fields[k.Value], p.keyLine[k.Value] = v, k.Line
	}
	j := &Joints{}
	p.str("name", &j.Name, false)
	p.strs("joint_names", &j.JointNames)
	n0 := len(j.JointNames)
	p.integer("dofs", &j.DOFs, false)
	p.boolean("supports_kinematics", &j.SupportsKinematics)
	p.float("max_power", &j.MaxPower, false)
	p.float("max_power_duration", &j.MaxPowerDuration, false)
	p.ints("map_index", &j.MapIndex, n0)
	p.ints("direction", &j.Direction, n0)
	for _, f := range []struct {
		name string
		dst  *[]float64
		opt  bool
	}{{"lower", &j.Lower, false}, {"upper", &j.Upper, false}, {"kp", &j.Kp, false}, {"kd", &j.Kd, false}, {"urdf_offset", &j.URDFOffset, true}} {
		p.floats(f.name, f.dst, n0, f.opt)
	}
	if p.err != nil {
		return nil, p.err
	}
	return j, p.validate(j)
}

var knownField = map[string]bool{
	"name": true, "dofs": true, "supports_kinematics": true, "max_power": true, "max_power_duration": true,
	"joint_names": true, "map_index": true, "direction": true, "lower": true, "upper": true,
	"kp": true, "kd": true, "urdf_offset": true,
}

// parser keeps the first error; later calls do nothing once it is set.
type parser struct {
	fields  map[string]*yaml.Node
	keyLine map[string]int
	top     int
	err     *ParseError
}

func (p *parser) fail(line int, field, format string, a ...any) {
	if p.err == nil {
		p.err = &ParseError{Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

func (p *parser) node(name string, required bool) *yaml.Node {
	v, ok := p.fields[name]
	if !ok && required {
		p.fail(p.top, name, "missing")
	}
	return v
}

func (p *parser) scalar(name string, v *yaml.Node, dst any, what string) bool {
	if v.Kind != yaml.ScalarNode {
		p.fail(v.Line, name, "expected %s", what)
		return false
	}
	if err := v.Decode(dst); err != nil {
		p.fail(v.Line, name, "expected %s, got %q", what, v.Value)
		return false
	}
	return true
}

func (p *parser) str(name string, dst *string, required bool) {
	if v := p.node(name, required); v != nil && p.err == nil {
		p.scalar(name, v, dst, "a string")
	}
}

func (p *parser) integer(name string, dst *int, required bool) {
	if v := p.node(name, required); v != nil && p.err == nil {
		p.scalar(name, v, dst, "an integer")
	}
}

func (p *parser) boolean(name string, dst *bool) {
	if v := p.node(name, false); v != nil && p.err == nil {
		p.scalar(name, v, dst, "true or false")
	}
}

func (p *parser) float(name string, dst *float64, required bool) {
	if v := p.node(name, required); v != nil && p.err == nil {
		if p.scalar(name, v, dst, "a number") && (math.IsNaN(*dst) || math.IsInf(*dst, 0) || *dst < 0) {
			p.fail(v.Line, name, "expected a finite number ≥ 0, got %s", v.Value)
		}
	}
}

// seq returns name's sequence node, checking its length against n (when
// n > 0).
func (p *parser) seq(name string, n int, required bool) *yaml.Node {
	v := p.node(name, required)
	if v == nil || p.err != nil {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		p.fail(v.Line, name, "expected a list")
		return nil
	}
	if n > 0 && len(v.Content) != n {
		p.fail(v.Line, name, "%d values, expected %d (one per joint of joint_names)", len(v.Content), n)
		return nil
	}
	return v
}

func (p *parser) strs(name string, dst *[]string) {
	v := p.seq(name, 0, true)
	if v == nil {
		return
	}
	if len(v.Content) == 0 {
		p.fail(v.Line, name, "expected at least one joint")
		return
	}
	seen := map[string]bool{}
	for i, e := range v.Content {
		var s string
		f := fmt.Sprintf("%s[%d]", name, i)
		if !p.scalar(f, e, &s, "a joint name") {
			return
		}
		if s == "" || seen[s] {
			p.fail(e.Line, f, "joint name %q is empty or repeated", s)
			return
		}
		seen[s] = true
		*dst = append(*dst, s)
	}
}

func (p *parser) ints(name string, dst *[]int, n int) {
	v := p.seq(name, n, true)
	if v == nil {
		return
	}
	for i, e := range v.Content {
		var x int
		if !p.scalar(fmt.Sprintf("%s[%d]", name, i), e, &x, "an integer") {
			return
		}
		*dst = append(*dst, x)
	}
}

func (p *parser) floats(name string, dst *[]float64, n int, optional bool) {
	if optional {
		if _, ok := p.fields[name]; !ok {
			*dst = make([]float64, n)
			return
		}
	}
	v := p.seq(name, n, true)
	if v == nil {
		return
	}
	for i, e := range v.Content {
		var x float64
		f := fmt.Sprintf("%s[%d]", name, i)
		if !p.scalar(f, e, &x, "a number") {
			return
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			p.fail(e.Line, f, "expected a finite number, got %s", e.Value)
			return
		}
		*dst = append(*dst, x)
	}
}

// validate checks what the fields mean together.
func (p *parser) validate(j *Joints) error {
	line := func(field string, i int) int {
		if v, ok := p.fields[field]; ok {
			if i >= 0 && v.Kind == yaml.SequenceNode && i < len(v.Content) {
				return v.Content[i].Line
			}
			return v.Line
		}
		return p.top
	}
	fail := func(field string, i int, format string, a ...any) error {
		f := field
		if i >= 0 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		return &ParseError{Line: line(field, i), Field: f, Msg: fmt.Sprintf(format, a...)}
	}
	if _, ok := p.fields["dofs"]; ok && j.DOFs != len(j.JointNames) {
		return fail("dofs", -1, "%d, but joint_names lists %d joints", j.DOFs, len(j.JointNames))
	}
	ids := map[int]int{}
	for i, id := range j.MapIndex {
		if id < 0 || id > 253 {
			return fail("map_index", i, "motor id %d is not 0–253", id)
		}
		if k, dup := ids[id]; dup {
			return fail("map_index", i, "motor id %d is already joint %s's", id, j.JointNames[k])
		}
		ids[id] = i
	}
	for i, d := range j.Direction {
		if d != 1 && d != -1 {
			return fail("direction", i, "%d, expected 1 or -1", d)
		}
	}
	for i := range j.Lower {
		if j.Lower[i] >= j.Upper[i] {
			return fail("upper", i, "%g is not above lower %g", j.Upper[i], j.Lower[i])
		}
		if j.Kp[i] < 0 {
			return fail("kp", i, "%g, expected ≥ 0", j.Kp[i])
		}
		if j.Kd[i] < 0 {
			return fail("kd", i, "%g, expected ≥ 0", j.Kd[i])
		}
	}
	if _, ok := p.fields["max_power"]; ok && j.MaxPower > 0 {
		if _, ok := p.fields["max_power_duration"]; !ok {
			return &ParseError{Line: line("max_power", -1), Field: "max_power_duration", Msg: "missing: max_power needs the duration (s) it may last"}
		}
		if j.MaxPowerDuration <= 0 {
			return fail("max_power_duration", -1, "expected a positive duration in seconds with max_power")
		}
	}
	return nil
}

// JointsSection decodes the joint table a role configuration c holds in
// its "motor" section n (joints.yaml's format): a missing section and
// every error in it name their field ("motor.kp") and line.
func JointsSection(c *roleconfig.Config, n *yaml.Node) (*Joints, error) {
	if n.Kind == 0 {
		return nil, c.Errorf("motor", "missing (the joint table, in joints.yaml's format)")
	}
	j, err := JointsFromNode(n)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, c.Errorf("motor."+pe.Field, "%s", pe.Msg)
		}
		return nil, c.Errorf("motor", "%v", err)
	}
	return j, nil
}
