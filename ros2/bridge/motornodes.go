package bridge

import (
	"regexp"
	"slices"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/roles/rolespec"
)

// DefaultMotorNodes are the node middlewares of the robot's default motor
// groups (bringup.DefaultMotorGroups, as the root middleware has them):
// the two arms, the head, the tracks and the balancing base.
func DefaultMotorNodes() []string { return prefixesOf(bringup.DefaultMotorGroups()) }

// MotorNodesOf returns the node middlewares of a robot configuration's
// motor groups (robot_param.yaml's motor_groups), in its order: a
// humanoid's five limbs, "/saint/limb/leg_left" …. A nil robot has the
// default groups.
func MotorNodesOf(r *bringup.Robot) []string {
	if r == nil {
		return DefaultMotorNodes()
	}
	return prefixesOf(r.Param.MotorGroups)
}

// prefixesOf is the role prefix of each motor group.
func prefixesOf(gs []bringup.MotorGroup) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, msg.TopicPrefix(g.Role, g.Instance))
	}
	return out
}

// motorNodePrefix is a role instance's prefix whose segments are also
// ROS 2 name segments.
var motorNodePrefix = regexp.MustCompile(`^/saint/[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)?$`)

// motorNodes are the node middlewares bridged: Options.MotorNodes, then
// the middleware of each bridged role that serves one (rolespec's
// MotorMiddleware) not among them. A role has no other names of its own
// when the bridge has none for it (a humanoid's limb), so its middleware
// is how it is reached, whether or not it is also a motor group.
func (b *Bridge) motorNodes() []string {
	nodes := b.o.MotorNodes
	if nodes == nil {
		nodes = DefaultMotorNodes()
	}
	out := slices.Clone(nodes)
	for _, r := range b.roles() {
		spec, _ := rolespec.Lookup(r[0])
		if p := msg.TopicPrefix(r[0], r[1]); spec.MotorMiddleware && spec.ValidInstance(r[1]) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
