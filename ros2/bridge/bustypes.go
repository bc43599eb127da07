package bridge

import (
	"regexp"
	"strings"
)

// BusTypes maps each bus topic whose payloads have the shape of a ROS 2
// interface type to that type ("nav_msgs/Odometry"): the state topics
// the bridge writes to DDS as they are, the bus payloads of those it
// converts (a power topic's PowerState, not the BatteryState it becomes),
// and the command topics whose bus payload is the ROS 2 message the
// bridge takes (the router's outputs /saint/head/cmd, /saint/tracks/cmd_vel
// ...). The arms' motor middleware topics are listed without a robot
// namespace; BusType finds them with one too. Recordings and the
// Foxglove server use it to store and show these topics as ROS 2 does.
func BusTypes() map[string]string {
	b := &Bridge{}
	out := map[string]string{}
	for _, t := range b.topics() {
		switch {
		case t.Out && t.ToROS == nil:
			out[t.busTopic()] = t.Type
		case t.Out && t.BusType != "":
			out[t.busTopic()] = t.BusType
		case t.In != nil:
			out[t.busTopic()] = t.Type
		}
	}
	return out
}

// nodeStatus matches a node's status topic, "/saint/nodes/ID/status".
var nodeStatus = regexp.MustCompile(`^/saint/nodes/[^/]+/status$`)

// robotNamespace matches the motor middleware's robot namespace segment
// ("/robot_7") in a topic.
var robotNamespace = regexp.MustCompile(`/robot_[^/]+/`)

// BusType returns the ROS 2 type the payloads of a bus topic have the
// shape of (see BusTypes), with types, the table BusTypes returned: a
// node's status is saint_os/NodeStatus, and a motor middleware topic in
// a robot namespace ("/saint/arms/left/robot_7/joint_states") has the
// type of the topic without it.
func BusType(types map[string]string, topic string) (string, bool) {
	if t, ok := types[topic]; ok {
		return t, true
	}
	if nodeStatus.MatchString(topic) {
		return "saint_os/NodeStatus", true
	}
	if loc := robotNamespace.FindStringIndex(topic); loc != nil && strings.HasPrefix(topic, "/saint/arms/") {
		t, ok := types[topic[:loc[0]]+"/"+topic[loc[1]:]]
		return t, ok
	}
	return "", false
}
