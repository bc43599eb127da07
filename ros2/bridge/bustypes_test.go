package bridge_test

import (
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
)

func TestBusTypes(t *testing.T) {
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	types := bridge.BusTypes()
	for topic, typ := range types {
		if m, ok := reg.Message(typ); !ok || m.Kind != "msg" {
			t.Errorf("%s: type %s is not a defined message", topic, typ)
		}
	}
	for topic, want := range map[string]string{
		msg.TopicTracksOdom: "nav_msgs/Odometry",
		msg.TopicHeadState:  "saint_os/HeadState",
		msg.TopicHeadCmd:    "saint_os/HeadCommand",
		// The bus's PowerState, not the BatteryState the bridge makes of it.
		msg.TopicTracksPower:                     "saint_os/PowerState",
		"/saint/arms/left/joint_states":          "sensor_msgs/JointState",
		"/saint/arms/right/joint_states":         "sensor_msgs/JointState",
		"/saint/nodes/sim-head/status":           "saint_os/NodeStatus",
		"/saint/nodes/sim-head/announce":         "saint_os/NodeGPIOStatus",
		msg.TopicUnadopted:                       "saint_os/NodeGPIOStatus",
		"/saint/limb/leg_left/joint_states":      "sensor_msgs/JointState",
		"/saint/limb/neck/session_status":        "saint_os/SessionStatus",
		"/saint/limb/arm_right/control_command":  "saint_os/ControlCommand",
		"/saint/limb/neck/cmd":                   "",
		"/saint/balance/imu":                     "", // made by the bridge, not on the bus
		msg.TopicRouterInput:                     "",
		"/saint/nodes/sim-head/extra/status":     "",
		"/saint/arms/right/robot_7/joint_states": "", // the namespace is never inside a prefix
	} {
		got, ok := bridge.BusType(types, topic)
		if got != want || ok != (want != "") {
			t.Errorf("BusType(%s) = %q, %v; want %q", topic, got, ok, want)
		}
	}
}
