package bridge

import (
	"fmt"
	"strings"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/msg"
)

// DefaultRoles are the role instances of a robot run without a robot
// type, the reference robot's (bringup.DefaultRoles), as prefixes: the
// head, the two arms, the tracks, the console and the balancing base.
func DefaultRoles() []string { return prefixes(bringup.DefaultRoles()) }

// RolesOf returns the role instances a robot configuration declares
// (bringup.Robot.Roles), as prefixes in its order: those of its nodes
// (robot_param.yaml's nodes), then those of its motor groups not among
// them. A humanoid's are its five limbs, "/saint/limb/leg_left" …. A nil
// robot, or one whose robot_param.yaml lists no nodes, has the reference
// robot's nodes, as saint-sim runs them (its motor groups' roles added).
func RolesOf(r *bringup.Robot) []string {
	if r == nil {
		return DefaultRoles()
	}
	return prefixes(r.Roles())
}

func prefixes(roles []bringup.RoleInstance) []string {
	out := make([]string, len(roles))
	for i, ri := range roles {
		out[i] = msg.TopicPrefix(ri.Role, ri.Instance)
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
