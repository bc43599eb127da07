package router

import (
	"math"
	"strconv"
	"strings"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/server/router/target"
)

// Units of output properties.
const (
	UnitDegrees = "deg"
	UnitMetres  = "m"
	// UnitQuaternion is a component of a rotation quaternion, −1 to 1.
	UnitQuaternion       = "quaternion"
	UnitFraction         = "fraction" // 0 to 1 of the device's range
	UnitMetresPerSecond  = "m/s"
	UnitRadiansPerSecond = "rad/s"
	UnitNewtons          = "N"
	// UnitSwitch is a property that is on at 0.5 or more, off below.
	UnitSwitch = "switch"
)

// PropertyEStop is the property, valid on every routable target, that
// engages the emergency stop when a mapping drives it to 0.5 or more.
const PropertyEStop = "estop"

// SwitchOn is the value from which a switch property is on.
const SwitchOn = 0.5

// Property is one controllable property of an output target, in the unit
// its message carries it.
type Property struct {
	// Name is the property's name in routes and commands ("pan"); with
	// Count, the stem of numbered properties ("joint": joint_0, joint_1 …).
	Name string `json:"name"`
	// Count is how many numbered properties Name stands for; 0 for one.
	Count int     `json:"count,omitempty"`
	Unit  string  `json:"unit"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	// Default is the value the message carries while nothing drives the
	// property.
	Default     float64 `json:"default"`
	Description string  `json:"description"`
}

// Names lists the property names Property stands for.
func (p Property) Names() []string {
	if p.Count == 0 {
		return []string{p.Name}
	}
	out := make([]string, p.Count)
	for i := range out {
		out[i] = indexed(p.Name, i)
	}
	return out
}

// label is how error messages list the property: "pan", "joint_0 … joint_15".
func (p Property) label() string {
	if p.Count == 0 {
		return p.Name
	}
	return indexed(p.Name, 0) + " … " + indexed(p.Name, p.Count-1)
}

// has reports whether name is one of the property's names.
func (p Property) has(name string) bool {
	if p.Count == 0 {
		return name == p.Name
	}
	n, ok := strings.CutPrefix(name, p.Name+"_")
	if !ok || n == "" || len(n) > 1 && n[0] == '0' {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i >= 0 && i < p.Count
}

// Check reports whether v is a value of the property; the error names
// field and says what was expected.
func (p Property) Check(field string, v float64) error {
	if math.IsNaN(v) || v < p.Min || v > p.Max {
		unit := ""
		if p.Unit != UnitFraction && p.Unit != UnitSwitch {
			unit = " " + p.Unit
		}
		return fieldErr(field, "want %g to %g%s, got %g", p.Min, p.Max, unit, v)
	}
	return nil
}

func indexed(stem string, i int) string { return stem + "_" + strconv.Itoa(i) }

// Message is a bus topic a target's values are sent on, and the type of
// message it carries (a type of package bus/msg).
type Message struct {
	Topic string `json:"topic"`
	Type  string `json:"type"`
}

// Publication is one message to publish.
type Publication struct {
	Topic   string
	Message any
}

// Values are an output's property values, by property name, in the
// properties' units.
type Values map[string]float64

// Target is one output target: what it controls (its properties, with
// units and limits), where its values go (bus topics and message types)
// and how its values become those messages. Targets() is the table every
// part of the router reads: route validation, the robot control
// commands, the preview and the route editor of the web UI (the router
// command get_targets).
type Target struct {
	Name        string     `json:"name"`
	Label       string     `json:"label"`
	Description string     `json:"description"`
	Properties  []Property `json:"properties"`
	Messages    []Message  `json:"messages"`
	// Routable says routes can drive the target; a target that is not
	// takes no mapped values (it is listed for its topics).
	Routable bool `json:"routable"`
	// EStopTopic takes msg.EStop when the emergency stop is engaged and
	// released; "" for none.
	EStopTopic string `json:"estop_topic,omitempty"`
	// Whole says a route or command gives the target's values whole:
	// properties the winning route does not drive take their defaults
	// instead of keeping the last value sent, so that a pose given in one
	// frame, or with an orientation, does not leak into the next one.
	Whole bool `json:"whole,omitempty"`
	// Stop are the values the target is sent when the emergency stop is
	// engaged and when its last route times out; nil holds its commands
	// back instead, so it stays where it is.
	Stop Values `json:"stop,omitempty"`

	// encode turns the target's values into its messages.
	encode func(t *Target, v Values) []Publication
}

// Property returns the property name belongs to.
func (t *Target) Property(name string) (Property, bool) {
	for _, p := range t.Properties {
		if p.has(name) {
			return p, true
		}
	}
	return Property{}, false
}

// PropertyNames lists the properties as error messages and the route
// editor show them ("joint_0 … joint_15" for the joints).
func (t *Target) PropertyNames() []string {
	out := make([]string, len(t.Properties))
	for i, p := range t.Properties {
		out[i] = p.label()
	}
	return out
}

// value is v's value of the property name, or the property's default.
func (t *Target) value(v Values, name string) float64 {
	if x, ok := v[name]; ok {
		return x
	}
	p, _ := t.Property(name)
	return p.Default
}

// Encode turns values into the messages the target is sent.
func (t *Target) Encode(v Values) []Publication {
	if t.encode == nil {
		return nil
	}
	return t.encode(t, v)
}

// estopProperty is every routable target's e-stop switch.
func estopProperty() Property {
	return Property{Name: PropertyEStop, Unit: UnitSwitch, Min: 0, Max: 1,
		Description: "engages the emergency stop at 0.5 or more; it is released with the estop command"}
}

// Targets returns the table of output targets, in the order the web UI
// shows them.
func Targets() []Target {
	return []Target{headTarget(), armTarget(msg.ArmLeft), armTarget(msg.ArmRight), armPoseTarget(msg.ArmLeft), armPoseTarget(msg.ArmRight),
		tracksTarget(), balanceTarget(), consoleTarget()}
}

// TargetNames lists the routable targets' names, in the table's order.
func TargetNames() []string {
	var out []string
	for _, t := range Targets() {
		if t.Routable {
			out = append(out, t.Name)
		}
	}
	return out
}

func headTarget() Target {
	return Target{
		Name: target.Head, Label: "Head", Routable: true,
		Description: "the head's pan, tilt and roll, its jaw and eyes, and its camera stream",
		Properties: []Property{
			{Name: "pan", Unit: UnitDegrees, Min: -target.MaxPan, Max: target.MaxPan, Description: "turn, positive to the left"},
			{Name: "tilt", Unit: UnitDegrees, Min: -target.MaxTilt, Max: target.MaxTilt, Description: "nod, positive up"},
			{Name: "roll", Unit: UnitDegrees, Min: -target.MaxRoll, Max: target.MaxRoll, Description: "tilt sideways"},
			{Name: "jaw", Unit: UnitFraction, Min: 0, Max: 1, Description: "jaw opening, 0 closed to 1 open"},
			{Name: "eyes_pan", Unit: UnitDegrees, Min: -target.MaxEyesPan, Max: target.MaxEyesPan, Description: "where the eyes look, positive to the left"},
			{Name: "eyes_tilt", Unit: UnitDegrees, Min: -target.MaxEyesTilt, Max: target.MaxEyesTilt, Description: "where the eyes look, positive up"},
			{Name: "speed", Unit: UnitFraction, Min: 0, Max: 1, Default: 1, Description: "fraction of the head's top speed"},
			estopProperty(),
		},
		Messages: []Message{{msg.TopicHeadCmd, "HeadCommand"}, {msg.TopicHeadCameraCmd, "HeadCameraCommand"}},
		encode: func(t *Target, v Values) []Publication {
			return []Publication{{msg.TopicHeadCmd, msg.HeadCommand{
				Pan: f32(t.value(v, "pan")), Tilt: f32(t.value(v, "tilt")), Roll: f32(t.value(v, "roll")),
				Speed: f32(t.value(v, "speed")), Jaw: f32(t.value(v, "jaw")),
				EyesPan: f32(t.value(v, "eyes_pan")), EyesTilt: f32(t.value(v, "eyes_tilt")),
			}}}
		},
	}
}

func armTarget(side string) Target {
	name, label := target.Arm(side), "Arms L"
	if side == msg.ArmRight {
		label = "Arms R"
	}
	return Target{
		Name: name, Label: label, Routable: true,
		Description: "the " + side + " arm's joints and gripper",
		Properties: []Property{
			{Name: "joint", Count: target.MaxJoints, Unit: UnitDegrees, Min: -target.MaxJointAngle, Max: target.MaxJointAngle, Description: "joint angle"},
			{Name: "speed", Unit: UnitFraction, Min: 0, Max: 1, Default: 1, Description: "fraction of the arm's top joint speed"},
			{Name: "immediate", Unit: UnitSwitch, Min: 0, Max: 1, Description: "go to the positions at once, without a trajectory"},
			{Name: "gripper", Unit: UnitFraction, Min: 0, Max: 1, Description: "gripper opening, 0 closed to 1 open"},
			{Name: "gripper_force", Unit: UnitNewtons, Min: 0, Max: target.MaxGripperForce, Description: "grip force limit"},
			estopProperty(),
		},
		Messages: []Message{{msg.ArmCmdTopic(side), "ArmCommand"}, {msg.GripperCmdTopic(side), "GripperCommand"}},
		encode: func(t *Target, v Values) []Publication {
			var out []Publication
			// The command carries the joints up to the highest one driven.
			n := -1
			for i := target.MaxJoints - 1; i >= 0; i-- {
				if _, ok := v[indexed("joint", i)]; ok {
					n = i
					break
				}
			}
			if n >= 0 {
				cmd := msg.ArmCommand{TargetPositions: make([]float32, n+1), SpeedFactor: f32(t.value(v, "speed")),
					Immediate: t.value(v, "immediate") >= SwitchOn}
				for i := range cmd.TargetPositions {
					cmd.TargetPositions[i] = f32(t.value(v, indexed("joint", i)))
				}
				out = append(out, Publication{msg.ArmCmdTopic(side), cmd})
			}
			if g, ok := v["gripper"]; ok {
				out = append(out, Publication{msg.GripperCmdTopic(side), msg.GripperCommand{Position: f32(g), Force: f32(t.value(v, "gripper_force"))}})
			}
			return out
		},
	}
}

// PropertyBaseFrame is the pose targets' switch that says x, y and z are
// in the arm's base frame (from its shoulder mount) rather than the
// robot's.
const PropertyBaseFrame = "base_frame"

// armPoseTarget is an arm driven by its gripper's pose. Its messages are
// the arm's own (an ArmCommand with the joint angles that put the gripper
// there, a GripperCommand), so it shares the arm's motors with armTarget:
// one drives the arm at a time. The table's encoder solves with
// kinematics.DefaultArm from the arm straight; a router's (bindPoseTargets)
// with the arm's own kinematics from the angles it solved last.
func armPoseTarget(side string) Target {
	name, label := target.ArmPose(side), "Arms L pose"
	if side == msg.ArmRight {
		label = "Arms R pose"
	}
	q := func(n, d string, def float64) Property {
		return Property{Name: n, Unit: UnitQuaternion, Min: -1, Max: 1, Default: def, Description: d}
	}
	return Target{
		Name: name, Label: label, Routable: true, Whole: true,
		Description: "the " + side + " arm's gripper pose, robot frame (x forward, y left, z up, m; the gripper's x axis " +
			"points out of the hand): the joint angles come from inverse kinematics, or the closest the arm reaches",
		Properties: []Property{
			{Name: "x", Unit: UnitMetres, Min: -target.MaxPoseDistance, Max: target.MaxPoseDistance, Description: "gripper position, forward"},
			{Name: "y", Unit: UnitMetres, Min: -target.MaxPoseDistance, Max: target.MaxPoseDistance, Description: "gripper position, left"},
			{Name: "z", Unit: UnitMetres, Min: -target.MaxPoseDistance, Max: target.MaxPoseDistance, Description: "gripper position, up"},
			q("qw", "gripper orientation quaternion, w (orientation counts once any of qw, qx, qy, qz is driven; all 0: position only)", 1),
			q("qx", "gripper orientation quaternion, x", 0),
			q("qy", "gripper orientation quaternion, y", 0),
			q("qz", "gripper orientation quaternion, z", 0),
			{Name: PropertyBaseFrame, Unit: UnitSwitch, Min: 0, Max: 1, Description: "x, y, z from the arm's shoulder mount instead of the robot's origin"},
			{Name: "speed", Unit: UnitFraction, Min: 0, Max: 1, Default: 1, Description: "fraction of the arm's top joint speed"},
			{Name: "immediate", Unit: UnitSwitch, Min: 0, Max: 1, Description: "go to the positions at once, without a trajectory"},
			{Name: "gripper", Unit: UnitFraction, Min: 0, Max: 1, Description: "gripper opening, 0 closed to 1 open"},
			{Name: "gripper_force", Unit: UnitNewtons, Min: 0, Max: target.MaxGripperForce, Description: "grip force limit"},
			estopProperty(),
		},
		Messages: []Message{{msg.ArmCmdTopic(side), "ArmCommand"}, {msg.GripperCmdTopic(side), "GripperCommand"}},
		encode: func(t *Target, v Values) []Publication {
			out, _ := poseCommand(side, kinematics.DefaultArm(side), nil, t, v, make([]float64, kinematics.NumJoints))
			return out
		},
	}
}

func tracksTarget() Target {
	return Target{
		Name: target.Tracks, Label: "Tracks", Routable: true,
		Description: "the tracked base's forward and turning velocity",
		Properties: []Property{
			{Name: "linear", Unit: UnitMetresPerSecond, Min: -target.MaxLinear, Max: target.MaxLinear, Description: "forward velocity"},
			{Name: "angular", Unit: UnitRadiansPerSecond, Min: -target.MaxAngular, Max: target.MaxAngular, Description: "turn rate, counter-clockwise positive"},
			estopProperty(),
		},
		Messages:   []Message{{msg.TopicTracksCmdVel, "Twist"}},
		EStopTopic: msg.TopicTracksEStop,
		// A base that loses its driver stops rather than rolls on.
		Stop: Values{"linear": 0, "angular": 0},
		encode: func(t *Target, v Values) []Publication {
			return []Publication{{msg.TopicTracksCmdVel, msg.Twist{
				Linear: msg.Vector3{X: t.value(v, "linear")}, Angular: msg.Vector3{Z: t.value(v, "angular")}}}}
		},
	}
}

func balanceTarget() Target {
	return Target{
		Name: target.Balance, Label: "Balance", Routable: true,
		Description: "the balancing base's forward and turning velocity and its arm switch; the base decides: it " +
			"drives only armed, arms only upright and safe, and the Orin's CAN commands come first",
		Properties: []Property{
			{Name: "linear", Unit: UnitMetresPerSecond, Min: -target.MaxBalanceLinear, Max: target.MaxBalanceLinear, Description: "forward velocity (capped by the base's speed limit)"},
			{Name: "angular", Unit: UnitRadiansPerSecond, Min: -target.MaxBalanceAngular, Max: target.MaxBalanceAngular, Description: "turn rate, counter-clockwise positive"},
			{Name: "arm", Unit: UnitSwitch, Min: 0, Max: 1, Description: "held on for 3 s arms the base (if upright and safe), off disarms it"},
			estopProperty(),
		},
		Messages:   []Message{{msg.TopicBalanceCmdVel, "Twist"}, {msg.TopicBalanceArm, "BalanceArm"}, {msg.TopicBalanceEStop, "EStop"}},
		EStopTopic: msg.TopicBalanceEStop,
		// A driver lost: stand still, balancing (never disarm: the base
		// would fall).
		Stop: Values{"linear": 0, "angular": 0},
		encode: func(t *Target, v Values) []Publication {
			out := []Publication{{msg.TopicBalanceCmdVel, msg.Twist{
				Linear: msg.Vector3{X: t.value(v, "linear")}, Angular: msg.Vector3{Z: t.value(v, "angular")}}}}
			if a, ok := v["arm"]; ok {
				out = append(out, Publication{msg.TopicBalanceArm, msg.BalanceArm{Arm: a >= SwitchOn}})
			}
			return out
		},
	}
}

func consoleTarget() Target {
	return Target{
		Name: target.Console, Label: "Console",
		Description: "the operator console's screen and alerts (text, not values a route maps)",
		Properties:  []Property{},
		Messages:    []Message{{msg.TopicConsoleDisplay, "ConsoleDisplay"}, {msg.TopicConsoleAlerts, "ConsoleAlert"}},
	}
}

// EStopTopics are where the router publishes msg.EStop: each target's
// EStopTopic, in the table's order.
func EStopTopics() []string {
	var out []string
	for _, t := range Targets() {
		if t.EStopTopic != "" {
			out = append(out, t.EStopTopic)
		}
	}
	return out
}

// targetTable is the targets by name.
type targetTable map[string]*Target

func newTargetTable() targetTable {
	ts := Targets()
	out := make(targetTable, len(ts))
	for i := range ts {
		out[ts[i].Name] = &ts[i]
	}
	return out
}

// routable returns the routable target name, or an error naming field.
func (tt targetTable) routable(field, name string) (*Target, error) {
	t, ok := tt[name]
	if !ok || !t.Routable {
		return nil, fieldErr(field, "want %s or * (passthrough), got %q", strings.Join(TargetNames(), ", "), name)
	}
	return t, nil
}

// ValidProperty reports whether target has the output property prop.
func ValidProperty(target, prop string) bool {
	t, ok := newTargetTable()[target]
	if !ok || !t.Routable {
		return false
	}
	_, ok = t.Property(prop)
	return ok
}

func f32(v float64) float32 {
	if math.IsNaN(v) {
		return 0
	}
	return float32(v)
}
