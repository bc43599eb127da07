package rolespec

import (
	"fmt"
	"strings"
)

// Instances says what may name a role's instances.
type Instances int

const (
	// Single roles have one instance per robot, unnamed: "head".
	Single Instances = iota
	// Sides roles have a left and a right instance: "arms_left".
	Sides
	// Named roles have any number of instances, each named by a topic
	// segment (ValidName): a humanoid's "limb_leg_left", "limb_neck".
	Named
)

// The roles' names.
const (
	Head    = "head"
	Arms    = "arms"
	Tracks  = "tracks"
	Console = "console"
	Balance = "balance"
	// Limb is a humanoid's limb, with an instance naming it: leg_left,
	// arm_right, neck ….
	Limb = "limb"
)

// The instances of a Sides role.
const (
	Left  = "left"
	Right = "right"
)

// RoleSpec is everything the tree knows about a role apart from its code.
type RoleSpec struct {
	// Name is the role's name, the role: field of its configurations.
	Name string
	// Instances says what names its instances.
	Instances Instances
	// DisplayName is the name the UI gives an adopted node that was given
	// none, before the instance's part (DefaultDisplayName).
	DisplayName string
	// CommandTopics are the topics under the role instance's prefix that
	// others send it, relative to the prefix ("cmd", "camera/cmd"): its
	// node subscribes to them and may not publish on them.
	CommandTopics []string
	// MotorMiddleware says the role serves a motor middleware under its
	// prefix, whose control_command topic is also a command topic.
	MotorMiddleware bool
	// Drives says the role's motors are speed-controlled drives (VELOCITY
	// is their mode, and holding them still is a VELOCITY of zero), not
	// positioned joints.
	Drives bool
	// RealTime says the role's control loop falls over when it stalls:
	// saint-node --rt=auto runs it in real-time mode.
	RealTime bool
}

// Table returns every role, in the order the UI shows them. It returns a
// fresh copy: callers may keep or change it.
func Table() []RoleSpec {
	return []RoleSpec{
		{Name: Head, DisplayName: "Head", CommandTopics: []string{"cmd", "camera/cmd"}, MotorMiddleware: true},
		{Name: Arms, Instances: Sides, DisplayName: "Arms", CommandTopics: []string{"cmd", "gripper/cmd"}, MotorMiddleware: true},
		{Name: Tracks, DisplayName: "Tracks", CommandTopics: []string{"cmd_vel", "estop"}, Drives: true},
		{Name: Console, DisplayName: "Console", CommandTopics: []string{"display", "alerts"}},
		{Name: Balance, DisplayName: "Balance", CommandTopics: []string{"cmd_vel", "estop", "arm"}, Drives: true, RealTime: true},
		{Name: Limb, Instances: Named, DisplayName: "Limb", MotorMiddleware: true},
	}
}

// Lookup returns the role named name, and whether there is one.
func Lookup(name string) (RoleSpec, bool) {
	for _, s := range Table() {
		if s.Name == name {
			return s, true
		}
	}
	return RoleSpec{}, false
}

// Names returns the role names in the table's order.
func Names() []string {
	t := Table()
	names := make([]string, len(t))
	for i, s := range t {
		names[i] = s.Name
	}
	return names
}

// ValidName reports whether s can name a Named role's instance: a
// lower-case letter, then lower-case letters, digits and '_', at most 32
// (it is a topic name segment and part of the role key, "limb_leg_left").
func ValidName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ValidInstance reports whether instance can name one of the role's
// instances ("" for a Single role).
func (s RoleSpec) ValidInstance(instance string) bool {
	switch s.Instances {
	case Sides:
		return instance == Left || instance == Right
	case Named:
		return ValidName(instance)
	}
	return instance == ""
}

// InstanceRule says in words what the role's instance must be, as an
// error message's "want": "instance left or right".
func (s RoleSpec) InstanceRule() string {
	switch s.Instances {
	case Sides:
		return "instance " + Left + " or " + Right
	case Named:
		return "an instance naming the " + s.Name + " (leg_left, arm_right, neck: lower-case letters, digits, '_')"
	}
	return "no instance"
}

// DefaultDisplayName is the name of an instance of the role adopted
// without one: "Head", "Arms L", "Limb leg left".
func (s RoleSpec) DefaultDisplayName(instance string) string {
	switch {
	case s.Instances == Sides && instance == Left:
		return s.DisplayName + " L"
	case s.Instances == Sides && instance == Right:
		return s.DisplayName + " R"
	case s.Instances == Named && instance != "":
		return s.DisplayName + " " + strings.ReplaceAll(instance, "_", " ")
	}
	return s.DisplayName
}

// Key is the configuration name of a role instance, "head", "arms_left"
// (the file names of a configuration's roles/ directory).
func Key(role, instance string) string {
	if instance == "" {
		return role
	}
	return role + "_" + instance
}

// ParseKey splits a configuration key into a role of the table and its
// instance, checking the instance fits the role: "arms_left" is arms,
// left; "limb_leg_left" is limb, leg_left.
func ParseKey(key string) (role, instance string, err error) {
	name, inst, _ := strings.Cut(key, "_")
	s, ok := Lookup(name)
	if !ok {
		return "", "", fmt.Errorf("%q does not start with a role (%s)", key, strings.Join(Names(), ", "))
	}
	if !s.ValidInstance(inst) {
		return "", "", fmt.Errorf("%q: role %s takes %s", key, s.Name, s.InstanceRule())
	}
	return s.Name, inst, nil
}
