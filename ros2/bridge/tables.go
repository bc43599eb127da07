package bridge

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router/target"
)

// Frames a target pose may be given in: the robot's (base_link, or an
// empty frame_id) or the arm's base frame, "arm_{side}_base", from its
// shoulder mount with the robot's axes.
const FrameRobot = "base_link"

// ArmBaseFrame is the frame_id of side's arm base frame.
func ArmBaseFrame(side string) string { return "arm_" + side + "_base" }

// topics is every bridged topic but the nodes' status (one per node,
// bridged as nodes appear): the robot-wide ones, the root middleware's,
// each role's (roleTopics) and each motor group's node middleware's.
func (b *Bridge) topics() []Topic {
	ts := []Topic{
		out(msg.TopicUnadopted, "saint_os/NodeGPIOStatus"),
		out(msg.TopicRouterStatus, "saint_os/RouteStatus"),
		out(msg.TopicRCState, "saint_os/RCReceiverState"),
		out(msg.TopicLiveLinkSubjects, "saint_os/LiveLinkSubject"),
	}
	// The robot's motor middleware at the root (server/motors): every
	// motor role's motors, with sessions shared with the router and the
	// WebSocket clients.
	root := func(n string) string { return msg.RootMotorName(n) }
	ts = append(ts,
		out(root(msg.MotorJointStates), "sensor_msgs/JointState"),
		out(root(msg.MotorSessionStatus), "saint_os/SessionStatus"),
		Topic{Name: root(msg.MotorControlCommand), Type: "saint_os/ControlCommand", QoS: DefaultQoS, In: passthrough(root(msg.MotorControlCommand))},
	)
	for _, r := range b.roles() {
		ts = append(ts, b.roleTopics(r[0], r[1])...)
	}
	// Each motor group's node middleware under its prefix, for a client
	// that drives one node's motors by their node ids.
	for _, prefix := range b.motorNodes() {
		ts = append(ts,
			out(msg.MotorName(prefix, msg.MotorJointStates), "sensor_msgs/JointState"),
			out(msg.MotorName(prefix, msg.MotorSessionStatus), "saint_os/SessionStatus"),
			Topic{Name: msg.MotorName(prefix, msg.MotorControlCommand), Type: "saint_os/ControlCommand", QoS: DefaultQoS,
				In: passthrough(msg.MotorName(prefix, msg.MotorControlCommand))},
		)
	}
	return ts
}

// out is a topic from the bus to DDS as it is, with the default QoS.
func out(name, typ string) Topic { return Topic{Name: name, Type: typ, QoS: DefaultQoS, Out: true} }

// roleTopics are the topics of one role instance: its state out and its
// commands in, through the router. A role without topics of its own
// here (a humanoid's limb, driven through its middleware) has none.
func (b *Bridge) roleTopics(role, instance string) []Topic {
	switch role {
	case msg.RoleTracks:
		return []Topic{
			out(msg.TopicTracksOdom, "nav_msgs/Odometry"),
			out(msg.TopicTracksState, "saint_os/TrackState"),
			out(msg.TopicTracksMotorCurrent, "saint_os/MotorCurrent"),
			{Name: msg.TopicTracksPower, Type: "sensor_msgs/BatteryState", QoS: DefaultQoS, Out: true, ToROS: batteryState(msg.TopicPrefix(msg.RoleTracks, "")),
				BusType: "saint_os/PowerState"},
			{Name: msg.TopicTracksCmdVel, Type: "geometry_msgs/Twist", QoS: DefaultQoS, In: cmdVel},
			{Name: msg.TopicTracksEStop, Type: "saint_os/EStop", QoS: DefaultQoS, In: estop},
		}
	case msg.RoleHead:
		return []Topic{
			out(msg.TopicHeadState, "saint_os/HeadState"),
			out(msg.TopicHeadMotion, "saint_os/HeadMotion"),
			out(msg.TopicHeadSensors, "saint_os/SensorReadings"),
			{Name: msg.TopicHeadCameraImageRaw, Type: "sensor_msgs/Image", QoS: SensorDataQoS, Out: true},
			{Name: msg.TopicHeadCmd, Type: "saint_os/HeadCommand", QoS: DefaultQoS, In: headCommand},
			{Name: msg.TopicHeadCameraCmd, Type: "saint_os/HeadCameraCommand", QoS: DefaultQoS, In: headCamera},
		}
	case msg.RoleBalance:
		return []Topic{
			out(msg.TopicBalanceState, "saint_os/BalanceState"),
			{Name: "/saint/balance/imu", Bus: msg.TopicBalanceState, Type: "sensor_msgs/Imu", QoS: DefaultQoS, Out: true, ToROS: b.balanceIMU},
		}
	case msg.RoleConsole:
		return []Topic{
			out(msg.TopicConsoleInput, "saint_os/ConsoleInput"),
			out(msg.TopicConsoleOverride, "saint_os/ConsoleOverride"),
			out(msg.TopicConsoleAlerts, "saint_os/ConsoleAlert"),
		}
	case msg.RoleArms:
		if instance == "" {
			return nil // an arm is always one side's
		}
		prefix := msg.TopicPrefix(msg.RoleArms, instance)
		return []Topic{
			out(msg.ArmStateTopic(instance), "saint_os/ArmState"),
			out(msg.GripperStateTopic(instance), "saint_os/GripperState"),
			{Name: msg.PowerTopic(prefix), Type: "sensor_msgs/BatteryState", QoS: DefaultQoS, Out: true, ToROS: batteryState(prefix),
				BusType: "saint_os/PowerState"},
			{Name: msg.ArmCmdTopic(instance), Type: "saint_os/ArmCommand", QoS: DefaultQoS, In: armCommand(instance)},
			{Name: msg.GripperCmdTopic(instance), Type: "saint_os/GripperCommand", QoS: DefaultQoS, In: gripperCommand(instance)},
			{Name: TargetPoseTopic(instance), Type: "geometry_msgs/PoseStamped", QoS: DefaultQoS, In: armTargetPose(instance)},
		}
	}
	return nil
}

// motorServices are the services of a motor middleware, the root's and
// each node's, under its prefix.
func motorServices() []struct{ name, typ string } {
	return []struct{ name, typ string }{
		{msg.MotorGetAvailableMotors, "saint_os/GetAvailableMotors"},
		{msg.MotorRequestControl, "saint_os/RequestControl"},
		{msg.MotorReleaseControl, "saint_os/ReleaseControl"},
		{msg.MotorResetZero, "saint_os/ResetZero"},
	}
}

// services is every bridged service: the server's, the root
// middleware's, each role's and each motor group's node middleware's.
func (b *Bridge) services() []Service {
	ss := []Service{
		{Name: msg.ServiceAdopt, Type: "saint_os/AdoptNode", Bus: msg.ServiceAdopt},
		{Name: msg.ServiceReset, Type: "saint_os/ResetNode", Bus: msg.ServiceReset},
		{Name: "/saint/nodes/gpio_probe", Type: "saint_os/GPIOProbe", BusFor: func(req map[string]any) (string, error) {
			id, _ := req["node_id"].(string)
			if !msg.ValidNodeID(id) {
				return "", fmt.Errorf("node_id: want 1 to 64 letters, digits, '-' or '_', got %q", id)
			}
			return msg.NodeGPIOProbeService(id), nil
		}},
		{Name: msg.ServiceFirmwareCheck, Type: "saint_os/FirmwareCheck", Bus: msg.ServiceFirmwareCheck},
		{Name: msg.ServiceSystemCommand, Type: "saint_os/SystemCommand", Bus: msg.ServiceSystemCommand},
		{Name: msg.ServiceSystemStatus, Type: "saint_os/GetSystemStatus", Bus: msg.ServiceSystemStatus, Wrap: "status"},
	}
	for _, s := range motorServices() {
		name := msg.RootMotorName(s.name)
		ss = append(ss, Service{Name: name, Type: s.typ, Bus: name})
	}
	for _, r := range b.roles() {
		if role, side := r[0], r[1]; role == msg.RoleArms && side != "" {
			prefix := msg.TopicPrefix(msg.RoleArms, side)
			ss = append(ss, Service{Name: prefix + "/" + msg.ArmHome, Type: "saint_os/ArmHome", Bus: prefix + "/" + msg.ArmHome})
		}
	}
	for _, prefix := range b.motorNodes() {
		for _, s := range motorServices() {
			name := msg.MotorName(prefix, s.name)
			ss = append(ss, Service{Name: name, Type: s.typ, Bus: name})
		}
	}
	return ss
}

// num reads a number at a path of nested objects ("linear", "x"); a
// missing field is 0.
func num(v map[string]any, path ...string) float64 {
	for i, k := range path {
		x := v[k]
		if i < len(path)-1 {
			v, _ = x.(map[string]any)
			continue
		}
		switch n := x.(type) {
		case float32:
			return float64(n)
		case float64:
			return n
		case int64:
			return float64(n)
		case uint64:
			return float64(n)
		case json.Number:
			f, _ := n.Float64()
			return f
		}
	}
	return 0
}

// inRange checks a command's field, which the decoder has already found
// finite.
func inRange(field string, v, lo, hi float64) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return fmt.Errorf("%s: want %g to %g, got %g", field, lo, hi, v)
	}
	return nil
}

// routerInput is a command for the router from source ros2.
func routerInput(output, command string, values map[string]float32) (string, any, error) {
	return msg.TopicRouterInput, msg.RouterInput{Source: msg.SourceROS2, Target: output, Command: command, Values: values}, nil
}

// cmdVel turns a geometry_msgs/Twist into the tracks' drive: forward
// speed linear.x (m/s) and yaw rate angular.z (rad/s); the tracks cannot
// move sideways, up or roll, so the other components are ignored.
func cmdVel(v map[string]any) (string, any, error) {
	lin, ang := num(v, "linear", "x"), num(v, "angular", "z")
	if err := inRange("linear.x", lin, -target.MaxLinear, target.MaxLinear); err != nil {
		return "", nil, err
	}
	if err := inRange("angular.z", ang, -target.MaxAngular, target.MaxAngular); err != nil {
		return "", nil, err
	}
	return routerInput(target.Tracks, target.CommandDrive, map[string]float32{"linear": float32(lin), "angular": float32(ang)})
}

// estop engages (active true) or releases the emergency stop, through the
// router as every e-stop source does.
func estop(v map[string]any) (string, any, error) {
	enable := float32(0)
	if a, _ := v["active"].(bool); a {
		enable = 1
	}
	return routerInput("", target.CommandEStop, map[string]float32{"enable": enable})
}

func headCommand(v map[string]any) (string, any, error) {
	vals := map[string]float32{}
	for _, c := range []struct {
		f      string
		lo, hi float64
	}{{"pan", -target.MaxPan, target.MaxPan}, {"tilt", -target.MaxTilt, target.MaxTilt}, {"roll", -target.MaxRoll, target.MaxRoll}, {"speed", 0, 1}, {"jaw", 0, 1}} {
		x := num(v, c.f)
		if err := inRange(c.f, x, c.lo, c.hi); err != nil {
			return "", nil, err
		}
		vals[c.f] = float32(x)
	}
	if vals["speed"] == 0 {
		delete(vals, "speed") // 0 is the message's default: the head's own speed
	}
	return routerInput(target.Head, target.CommandMove, vals)
}

// headCamera turns the head camera's stream on or off, through the
// router as the WebSocket API's head camera command does.
func headCamera(v map[string]any) (string, any, error) {
	enable := float32(0)
	if on, _ := v["enable"].(bool); on {
		enable = 1
	}
	return routerInput(target.Head, target.CommandCamera, map[string]float32{"enable": enable})
}

func armCommand(side string) func(map[string]any) (string, any, error) {
	return func(v map[string]any) (string, any, error) {
		pos, _ := v["target_positions"].([]any)
		if len(pos) == 0 || len(pos) > target.MaxJoints {
			return "", nil, fmt.Errorf("target_positions: want 1 to %d joint angles in degrees, got %d", target.MaxJoints, len(pos))
		}
		vals := map[string]float32{}
		for i, p := range pos {
			x := num(map[string]any{"p": p}, "p")
			if err := inRange(fmt.Sprintf("target_positions[%d]", i), x, -target.MaxJointAngle, target.MaxJointAngle); err != nil {
				return "", nil, err
			}
			vals[fmt.Sprintf("joint_%d", i)] = float32(x)
		}
		sf := num(v, "speed_factor")
		if err := inRange("speed_factor", sf, 0, 1); err != nil {
			return "", nil, err
		}
		if sf > 0 {
			vals["speed"] = float32(sf)
		}
		if im, _ := v["immediate"].(bool); im {
			vals["immediate"] = 1
		}
		return routerInput(target.Arm(side), target.CommandMove, vals)
	}
}

// TargetPoseTopic is where side's gripper takes a target pose.
func TargetPoseTopic(side string) string { return msg.TopicPrefix(msg.RoleArms, side) + "/target_pose" }

// armTargetPose turns a geometry_msgs/PoseStamped into a pose for the
// arm's gripper: the router's arms.{side}.pose target, which solves the
// joint angles by inverse kinematics. The frame is base_link (or empty)
// for the robot's, arm_{side}_base for the arm's shoulder mount; an
// orientation of all zeros (an unset quaternion) asks for the position
// only, any other must be a unit quaternion. Every property of the pose
// is sent, the frame switch and a zero quaternion included, because the
// router merges a source's commands while it stays fresh.
func armTargetPose(side string) func(map[string]any) (string, any, error) {
	return func(v map[string]any) (string, any, error) {
		hdr, _ := v["header"].(map[string]any)
		frame, _ := hdr["frame_id"].(string)
		vals := map[string]float32{"base_frame": 0}
		switch frame {
		case "", FrameRobot:
		case ArmBaseFrame(side):
			vals["base_frame"] = 1
		default:
			return "", nil, fmt.Errorf("header.frame_id: want %s (the robot) or %s (the arm's shoulder mount), got %q", FrameRobot, ArmBaseFrame(side), frame)
		}
		for _, c := range []string{"x", "y", "z"} {
			x := num(v, "pose", "position", c)
			if err := inRange("pose.position."+c, x, -target.MaxPoseDistance, target.MaxPoseDistance); err != nil {
				return "", nil, err
			}
			vals[c] = float32(x)
		}
		q := [4]float64{num(v, "pose", "orientation", "w"), num(v, "pose", "orientation", "x"),
			num(v, "pose", "orientation", "y"), num(v, "pose", "orientation", "z")}
		n := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
		switch {
		case n == 0:
			// The router's pose target reads a zero quaternion as the
			// position only.
			for _, c := range []string{"qw", "qx", "qy", "qz"} {
				vals[c] = 0
			}
		case math.Abs(n-1) > 0.01:
			return "", nil, fmt.Errorf("pose.orientation: want a unit quaternion (or all zeros for the position only), got length %.4g", n)
		default:
			for i, c := range []string{"qw", "qx", "qy", "qz"} {
				vals[c] = float32(q[i] / n)
			}
		}
		return routerInput(target.ArmPose(side), target.CommandMove, vals)
	}
}

func gripperCommand(side string) func(map[string]any) (string, any, error) {
	return func(v map[string]any) (string, any, error) {
		p, f := num(v, "position"), num(v, "force")
		if err := inRange("position", p, 0, 1); err != nil {
			return "", nil, err
		}
		if err := inRange("force", f, 0, target.MaxGripperForce); err != nil {
			return "", nil, err
		}
		vals := map[string]float32{"gripper": float32(p)}
		if f > 0 {
			vals["gripper_force"] = float32(f)
		}
		return routerInput(target.Arm(side), target.CommandGripper, vals)
	}
}

// passthrough publishes the ROS message on the bus topic as it is: for
// the motor middlewares, which check their own session ownership.
func passthrough(topic string) func(map[string]any) (string, any, error) {
	return func(v map[string]any) (string, any, error) { return topic, v, nil }
}

// batteryState turns a motor role's PowerState into sensor_msgs/BatteryState.
// What the INA219 does not measure is NaN, ROS's "unknown"; the current is
// negative while discharging, as BatteryState wants.
func batteryState(location string) func(v map[string]any) (map[string]any, error) {
	const (
		healthUnknown = 0
		healthGood    = 1
		healthDead    = 3
	)
	return func(v map[string]any) (map[string]any, error) {
		present, _ := v["present"].(bool)
		cutoff, _ := v["cutoff"].(bool)
		health := healthUnknown
		switch {
		case present && cutoff:
			health = healthDead
		case present:
			health = healthGood
		}
		nan := math.NaN()
		return map[string]any{
			"header":              v["header"],
			"voltage":             num(v, "voltage"),
			"current":             -num(v, "current"),
			"temperature":         nan,
			"charge":              nan,
			"capacity":            nan,
			"design_capacity":     nan,
			"percentage":          nan,
			"power_supply_health": health,
			"present":             present,
			"location":            location,
		}, nil
	}
}

// balanceIMU turns the balancing base's state into sensor_msgs/Imu: the
// orientation is the measured pitch about the y axis of base_link, the
// angular velocity the pitch rate and the yaw rate; the base reports no
// acceleration (covariance -1: no estimate).
func (b *Bridge) balanceIMU(v map[string]any) (map[string]any, error) {
	pitch := num(v, "pitch_deg") * math.Pi / 180
	rate := num(v, "pitch_rate_dps") * math.Pi / 180
	noAccel := make([]any, 9)
	for i := range noAccel {
		noAccel[i] = 0.0
	}
	noAccel[0] = -1.0
	stamp := msg.TimeOf(b.busNow())
	return map[string]any{
		"header":                         map[string]any{"stamp": map[string]any{"sec": float64(stamp.Sec), "nanosec": float64(stamp.Nanosec)}, "frame_id": "base_link"},
		"orientation":                    map[string]any{"x": 0.0, "y": math.Sin(pitch / 2), "z": 0.0, "w": math.Cos(pitch / 2)},
		"angular_velocity":               map[string]any{"y": rate, "z": num(v, "yaw_rate_rps")},
		"linear_acceleration_covariance": noAccel,
	}, nil
}
