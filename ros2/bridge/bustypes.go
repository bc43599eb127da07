package bridge

import "regexp"

// BusTypes maps each bus topic whose payloads have the shape of a ROS 2
// interface type to that type ("nav_msgs/Odometry"): the state topics
// the bridge writes to DDS as they are, the bus payloads of those it
// converts (a power topic's PowerState, not the BatteryState it becomes),
// and the command topics whose bus payload is the ROS 2 message the
// bridge takes (the router's outputs /saint/head/cmd, /saint/tracks/cmd_vel
// ...). The names are those inside the robot namespace, as a recorder or
// the Foxglove server on the robot's bus sees them. Recordings and the
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

// nodeAnnounce matches an unadopted node's own announcement topic,
// "/saint/nodes/ID/announce" (the server relays it on /saint/nodes/unadopted).
var nodeAnnounce = regexp.MustCompile(`^/saint/nodes/[^/]+/announce$`)

// motorNodeTopic matches a node middleware's topics under any role's
// prefix ("/saint/limb/leg_left/joint_states"): the robot's motor groups
// are not all known here.
var motorNodeTopic = regexp.MustCompile(`^/saint/[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)?/(joint_states|session_status|control_command)$`)

// motorNodeTypes are the types of a node middleware's topics.
var motorNodeTypes = map[string]string{
	"joint_states":    "sensor_msgs/JointState",
	"session_status":  "saint_os/SessionStatus",
	"control_command": "saint_os/ControlCommand",
}

// BusType returns the ROS 2 type the payloads of a bus topic have the
// shape of (see BusTypes), with types, the table BusTypes returned: a
// node's status is saint_os/NodeStatus, its announcement
// saint_os/NodeGPIOStatus, and any motor group's node
// middleware topics (a humanoid limb's joint_states) have their types.
func BusType(types map[string]string, topic string) (string, bool) {
	if t, ok := types[topic]; ok {
		return t, true
	}
	if nodeStatus.MatchString(topic) {
		return "saint_os/NodeStatus", true
	}
	if nodeAnnounce.MatchString(topic) {
		return "saint_os/NodeGPIOStatus", true
	}
	if m := motorNodeTopic.FindStringSubmatch(topic); m != nil {
		return motorNodeTypes[m[2]], true
	}
	return "", false
}
