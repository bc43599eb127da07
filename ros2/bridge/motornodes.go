package bridge

import (
	"regexp"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/msg"
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

// motorNodes are the node middlewares bridged.
func (b *Bridge) motorNodes() []string {
	if b.o.MotorNodes == nil {
		return DefaultMotorNodes()
	}
	return b.o.MotorNodes
}
