package bridge

import (
	"fmt"
	"strings"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/msg"
)

// DefaultRoles are the role instances of a robot run without a robot
// type, the reference robot's: the head, the two arms, the tracks, the
// console and the balancing base.
func DefaultRoles() []string {
	return []string{
		msg.TopicPrefix(msg.RoleHead, ""),
		msg.TopicPrefix(msg.RoleArms, msg.ArmLeft),
		msg.TopicPrefix(msg.RoleArms, msg.ArmRight),
		msg.TopicPrefix(msg.RoleTracks, ""),
		msg.TopicPrefix(msg.RoleConsole, ""),
		msg.TopicPrefix(msg.RoleBalance, ""),
	}
}

// RolesOf returns the role instances a robot configuration declares, as
// prefixes in its order: those of its nodes (robot_param.yaml's nodes),
// then those of its motor groups not among them. A humanoid's are its
// five limbs, "/saint/limb/leg_left" …. A nil robot, or one whose
// robot_param.yaml lists no nodes, has the reference robot's nodes, as
// saint-sim runs them (its motor groups' roles added).
func RolesOf(r *bringup.Robot) []string {
	if r == nil {
		return DefaultRoles()
	}
	var out []string
	seen := map[string]bool{}
	add := func(role, instance string) {
		if p := msg.TopicPrefix(role, instance); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if len(r.Param.Nodes) == 0 {
		for _, p := range DefaultRoles() {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, n := range r.Param.Nodes {
		add(n.Role, n.Instance)
	}
	for _, g := range r.Param.MotorGroups {
		add(g.Role, g.Instance)
	}
	return out
}

// checkPrefixes says which entry of the Options field cannot be a role
// prefix, or is listed twice.
func checkPrefixes(field string, prefixes []string) error {
	seen := map[string]bool{}
	for i, p := range prefixes {
		if !motorNodePrefix.MatchString(p) {
			return fmt.Errorf("bridge: Options.%s[%d]: want a role prefix /saint/{role} or /saint/{role}/{instance}, got %q", field, i, p)
		}
		if seen[p] {
			return fmt.Errorf("bridge: Options.%s[%d]: %s listed twice", field, i, p)
		}
		seen[p] = true
	}
	return nil
}

// roles are the role instances bridged, each split into its role and
// instance ("/saint/arms/left": arms, left).
func (b *Bridge) roles() [][2]string {
	prefixes := b.o.Roles
	if prefixes == nil {
		prefixes = DefaultRoles()
	}
	out := make([][2]string, 0, len(prefixes))
	for _, p := range prefixes {
		role, instance, _ := strings.Cut(strings.TrimPrefix(p, "/saint/"), "/")
		out = append(out, [2]string{role, instance})
	}
	return out
}
