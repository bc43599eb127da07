package bringup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/motor"
)

// Dir is the directory of the robot configurations in the configuration
// tree.
const Dir = "robot_config"

// The files of a robot configuration.
const (
	RobotParamFile   = "robot_param.yaml"
	JointsFile       = "joints.yaml"
	CustomActionFile = "custom_action.yaml"
)

// Params are the launch parameters a robot_type is made of.
type Params struct {
	ModelType, LegType          string
	Leg, Arm, Claw, Head, Waist int
}

// RobotType returns the robot_type of p: "pi_plus-S-12L8A0G2H0W".
func (p Params) RobotType() string {
	return fmt.Sprintf("%s-%s-%dL%dA%dG%dH%dW", p.ModelType, p.LegType, p.Leg, p.Arm, p.Claw, p.Head, p.Waist)
}

var robotTypeRE = regexp.MustCompile(`^([a-z][a-z0-9_]*)-([A-Za-z0-9]+)-(\d+)L(\d+)A(\d+)G(\d+)H(\d+)W$`)

// ParseRobotType splits a robot_type into its parameters.
func ParseRobotType(s string) (Params, error) {
	m := robotTypeRE.FindStringSubmatch(s)
	if m == nil {
		return Params{}, fmt.Errorf("bringup: robot_type %q: expected MODEL-LEGTYPE-<leg>L<arm>A<claw>G<head>H<waist>W, as pi_plus-S-12L8A0G2H0W", s)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	return Params{ModelType: m[1], LegType: m[2], Leg: n(3), Arm: n(4), Claw: n(5), Head: n(6), Waist: n(7)}, nil
}

// Available lists the robot types of the configuration tree fsys.
func Available(fsys fs.FS) []string {
	entries, err := fs.ReadDir(fsys, Dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if _, perr := ParseRobotType(e.Name()); e.IsDir() && perr == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// RobotParam is robot_param.yaml.
type RobotParam struct {
	// RobotID namespaces the robot's names: /robot_{id}/...; empty: none.
	RobotID string `yaml:"robot_id"`
	// DefaultTimeoutMS is the sessions' timeout when a request names none.
	DefaultTimeoutMS int `yaml:"default_timeout_ms"`
	// MotorGroups are the motor roles whose middlewares drive the joints.
	MotorGroups []MotorGroup `yaml:"motor_groups"`
	// Nodes describe the robot's nodes and what is wired to them.
	Nodes []Node `yaml:"nodes"`
	// RoleConfigs replace role configurations of the tree's roles/ for
	// this robot: role key ("arms_left") → a file of the configuration
	// tree ("arms_can/arms_left.yaml").
	RoleConfigs map[string]string `yaml:"role_configs"`
}

// MotorGroup is one motor role's node middleware and the robot-wide ids
// of its motors: Base plus the node's own ids.
type MotorGroup struct {
	Name     string `yaml:"name"`
	Role     string `yaml:"role"`
	Instance string `yaml:"instance"`
	Base     int    `yaml:"base"`
	// JointPrefix is put before the node's joint names to make the
	// robot-wide ones.
	JointPrefix string `yaml:"joint_prefix"`
}

// DefaultMotorGroups are the motor groups of a robot run without a
// robot type: the reference robot's two arms, head, tracks and balancing
// base. The root middleware and the ROS 2 bridge both start from it.
func DefaultMotorGroups() []MotorGroup {
	return []MotorGroup{
		{Name: "arms_left", Role: msg.RoleArms, Instance: msg.ArmLeft, Base: 10, JointPrefix: "left_"},
		{Name: "arms_right", Role: msg.RoleArms, Instance: msg.ArmRight, Base: 20, JointPrefix: "right_"},
		{Name: "head", Role: msg.RoleHead, Base: 30, JointPrefix: "head_"},
		{Name: "tracks", Role: msg.RoleTracks, Base: 40},
		{Name: "balance", Role: msg.RoleBalance, Base: 50},
	}
}

// Node is one node of the robot: its role and instance, the simulated
// board profile that matches its wiring, and what drives it.
type Node struct {
	Role     string `yaml:"role"`
	Instance string `yaml:"instance"`
	Profile  string `yaml:"sim_profile"`
	Devices  string `yaml:"devices"`
}

// Action is one custom action: a joint-space motion through keyframes.
type Action struct {
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Joints      []string   `yaml:"joints"`
	Keyframes   []Keyframe `yaml:"keyframes"`
}

// Keyframe is where the action's joints are at Time (s from the start),
// in rad, one value per joint of the action.
type Keyframe struct {
	Time      float64   `yaml:"time"`
	Positions []float64 `yaml:"positions"`
}

// Robot is a resolved robot configuration.
type Robot struct {
	Type    string
	Params  Params
	Param   RobotParam
	Joints  *motor.Joints
	Actions []Action
	// RoleConfigData holds the files of Param.RoleConfigs, by role key.
	RoleConfigData map[string][]byte
}

// Action returns the custom action called name.
func (r *Robot) Action(name string) (Action, bool) {
	for _, a := range r.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return Action{}, false
}

// Resolve reads robot_config/<robotType>/ of fsys.
func Resolve(fsys fs.FS, robotType string) (*Robot, error) {
	avail := Available(fsys)
	list := strings.Join(avail, ", ")
	if list == "" {
		list = "none in " + Dir + "/"
	}
	if robotType == "" {
		return nil, fmt.Errorf("bringup: robot_type: missing (available: %s)", list)
	}
	p, err := ParseRobotType(robotType)
	if err != nil {
		return nil, fmt.Errorf("%w (available: %s)", err, list)
	}
	if !slices.Contains(avail, robotType) {
		return nil, fmt.Errorf("bringup: robot_type %q: no %s/%s/ (available: %s)", robotType, Dir, robotType, list)
	}
	dir := path.Join(Dir, robotType)
	read := func(name string) ([]byte, error) {
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("bringup: %s/%s: %w", dir, name, err)
		}
		return data, nil
	}
	r := &Robot{Type: robotType, Params: p}
	data, err := read(RobotParamFile)
	if err != nil {
		return nil, err
	}
	if err := decodeStrict(data, &r.Param); err != nil {
		return nil, fmt.Errorf("bringup: %s/%s: %w", dir, RobotParamFile, err)
	}
	if data, err = read(JointsFile); err != nil {
		return nil, err
	}
	if r.Joints, err = motor.ParseJoints(data); err != nil {
		return nil, fmt.Errorf("bringup: %s/%w", dir, err)
	}
	if data, err = read(CustomActionFile); err != nil {
		return nil, err
	}
	var ca struct {
		Actions []Action `yaml:"actions"`
	}
	if err := decodeStrict(data, &ca); err != nil {
		return nil, fmt.Errorf("bringup: %s/%s: %w", dir, CustomActionFile, err)
	}
	r.Actions = ca.Actions
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("bringup: %s/%w", dir, err)
	}
	r.RoleConfigData = map[string][]byte{}
	for key, file := range r.Param.RoleConfigs {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("bringup: %s/%s: role_configs.%s: %w", dir, RobotParamFile, key, err)
		}
		cfg, err := roleconfig.ParseFile(file, data)
		if err != nil {
			return nil, fmt.Errorf("bringup: %s/%s: role_configs.%s: %w", dir, RobotParamFile, key, err)
		}
		if got := msg.RoleKey(cfg.Role, cfg.Instance); got != key {
			return nil, fmt.Errorf("bringup: %s/%s: role_configs.%s: %s configures %s", dir, RobotParamFile, key, file, got)
		}
		r.RoleConfigData[key] = data
	}
	return r, nil
}

// RoleInstance is a role and, for arms and limbs, its instance: one node
// of the robot.
type RoleInstance struct {
	Role     string
	Instance string
}

// Key is the role key, "arms_left".
func (ri RoleInstance) Key() string { return msg.RoleKey(ri.Role, ri.Instance) }

// DefaultRoles are the role instances of a robot run without a robot
// type, the reference robot's: the head, the two arms, the tracks, the
// console and the balancing base.
func DefaultRoles() []RoleInstance {
	return []RoleInstance{
		{msg.RoleHead, ""},
		{msg.RoleArms, msg.ArmLeft},
		{msg.RoleArms, msg.ArmRight},
		{msg.RoleTracks, ""},
		{msg.RoleConsole, ""},
		{msg.RoleBalance, ""},
	}
}

// Roles returns the role instances the robot declares, in its order:
// those of its nodes (robot_param.yaml's nodes), then those of its motor
// groups not among them. A humanoid's are its five limbs. A robot whose
// robot_param.yaml lists no nodes has the reference robot's nodes
// (DefaultRoles), as saint-sim runs them, its motor groups' roles added.
// The server adopts nodes only into these, the ROS 2 bridge carries their
// topics.
func (r *Robot) Roles() []RoleInstance {
	var out []RoleInstance
	seen := map[RoleInstance]bool{}
	add := func(ri RoleInstance) {
		if !seen[ri] {
			seen[ri] = true
			out = append(out, ri)
		}
	}
	if len(r.Param.Nodes) == 0 {
		for _, ri := range DefaultRoles() {
			add(ri)
		}
	}
	for _, n := range r.Param.Nodes {
		add(RoleInstance{n.Role, n.Instance})
	}
	for _, g := range r.Param.MotorGroups {
		add(RoleInstance{g.Role, g.Instance})
	}
	return out
}

// SimProfile returns the simulated board profile robot_param.yaml gives
// the node of a role key ("arms_left"), "" when it names none.
func (r *Robot) SimProfile(key string) string {
	for _, n := range r.Param.Nodes {
		k := n.Role
		if n.Instance != "" {
			k += "_" + n.Instance
		}
		if k == key {
			return n.Profile
		}
	}
	return ""
}

// decodeStrict decodes YAML refusing unknown fields (yaml's errors carry
// the line).
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// check ties the three files together: every joint's motor belongs to a
// motor group, every action names known joints with well-formed, timed,
// in-limit keyframes.
func (r *Robot) check() error {
	groups := map[string]bool{}
	for i, g := range r.Param.MotorGroups {
		if g.Name == "" || g.Role == "" || groups[g.Name] {
			return fmt.Errorf("%s: motor_groups[%d]: a unique name and a role", RobotParamFile, i)
		}
		groups[g.Name] = true
	}
	j := r.Joints
	for i, id := range j.MapIndex {
		if r.GroupOf(id) == nil {
			return fmt.Errorf("%s: map_index[%d]: motor %d (%s) is in no motor group of %s (a motor is its group's base plus the node's id)", JointsFile, i, id, j.JointNames[i], RobotParamFile)
		}
	}
	seen := map[string]bool{}
	for ai, a := range r.Actions {
		where := fmt.Sprintf("%s: actions[%d]", CustomActionFile, ai)
		if a.Name == "" || seen[a.Name] {
			return fmt.Errorf("%s: name: missing or not unique", where)
		}
		seen[a.Name] = true
		where += " (" + a.Name + ")"
		if len(a.Joints) == 0 || len(a.Keyframes) == 0 {
			return fmt.Errorf("%s: needs joints and keyframes", where)
		}
		idx := make([]int, len(a.Joints))
		for k, name := range a.Joints {
			idx[k] = slices.Index(j.JointNames, name)
			if idx[k] < 0 {
				return fmt.Errorf("%s: joints[%d]: %q is not a joint of %s", where, k, name, JointsFile)
			}
		}
		prev := 0.0
		for ki, kf := range a.Keyframes {
			if !(kf.Time > prev) || math.IsInf(kf.Time, 0) {
				return fmt.Errorf("%s: keyframes[%d].time: %v, expected after %v s (the first after 0: the motion starts where the joints are)", where, ki, kf.Time, prev)
			}
			prev = kf.Time
			if len(kf.Positions) != len(a.Joints) {
				return fmt.Errorf("%s: keyframes[%d].positions: %d values, expected %d (one per joint of joints)", where, ki, len(kf.Positions), len(a.Joints))
			}
			for k, q := range kf.Positions {
				i := idx[k]
				if math.IsNaN(q) || q < j.Lower[i] || q > j.Upper[i] {
					return fmt.Errorf("%s: keyframes[%d].positions[%d]: %v rad, outside %s's limits [%v, %v]", where, ki, k, q, a.Joints[k], j.Lower[i], j.Upper[i])
				}
			}
		}
	}
	return nil
}

// GroupOf returns the motor group of a robot-wide motor id: the group
// with the largest base below it; nil when none is.
func (r *Robot) GroupOf(id int) *MotorGroup {
	var best *MotorGroup
	for i := range r.Param.MotorGroups {
		g := &r.Param.MotorGroups[i]
		if g.Base < id && (best == nil || g.Base > best.Base) {
			best = g
		}
	}
	return best
}
