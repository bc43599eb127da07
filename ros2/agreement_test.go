package ros2

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

// goTypes is which Go type of bus/msg each interface has the shape of.
// The bridge maps the bus's JSON to CDR by field name, so every field of
// the .msg file must be a JSON field of the Go type with the same type.
var goTypes = map[string]any{
	"builtin_interfaces/Time":            msg.Time{},
	"std_msgs/Header":                    msg.Header{},
	"geometry_msgs/Vector3":              msg.Vector3{},
	"geometry_msgs/Point":                msg.Point{},
	"geometry_msgs/Quaternion":           msg.Quaternion{},
	"geometry_msgs/Pose":                 msg.Pose{},
	"geometry_msgs/PoseWithCovariance":   msg.PoseWithCovariance{},
	"geometry_msgs/PoseStamped":          msg.PoseStamped{},
	"geometry_msgs/Twist":                msg.Twist{},
	"geometry_msgs/TwistWithCovariance":  msg.TwistWithCovariance{},
	"geometry_msgs/Transform":            msg.Transform{},
	"nav_msgs/Odometry":                  msg.Odometry{},
	"sensor_msgs/Image":                  msg.Image{},
	"sensor_msgs/JointState":             msg.JointStates{},
	"saint_os/NodeGPIOStatus":            msg.NodeGPIOStatus{},
	"saint_os/GPIOPin":                   msg.GPIOPin{},
	"saint_os/PeripheralInfo":            msg.PeripheralInfo{},
	"saint_os/NodeAnnouncement":          msg.NodeAnnouncement{},
	"saint_os/NodeStatus":                msg.NodeStatus{},
	"saint_os/LiveLinkFrame":             msg.LiveLinkFrame{},
	"saint_os/LiveLinkSubject":           msg.LiveLinkSubject{},
	"saint_os/RCChannelState":            msg.RCChannelState{},
	"saint_os/RCReceiverState":           msg.RCReceiverState{},
	"saint_os/RouteStatus":               msg.RouteStatus{},
	"saint_os/RouteState":                msg.RouteState{},
	"saint_os/OutputState":               msg.OutputState{},
	"saint_os/HeadState":                 msg.HeadState{},
	"saint_os/HeadCommand":               msg.HeadCommand{},
	"saint_os/HeadAngles":                msg.HeadAngles{},
	"saint_os/HeadCameraCommand":         msg.HeadCameraCommand{},
	"saint_os/HeadMotion":                msg.HeadMotion{},
	"saint_os/ArmState":                  msg.ArmState{},
	"saint_os/ArmCommand":                msg.ArmCommand{},
	"saint_os/GripperCommand":            msg.GripperCommand{},
	"saint_os/GripperState":              msg.GripperState{},
	"saint_os/TrackState":                msg.TrackState{},
	"saint_os/MotorCurrent":              msg.MotorCurrent{},
	"saint_os/MotorSession":              msg.MotorSession{},
	"saint_os/EStop":                     msg.EStop{},
	"saint_os/ConsoleInput":              msg.ConsoleInput{},
	"saint_os/ConsoleOverride":           msg.ConsoleOverride{},
	"saint_os/ConsoleDisplay":            msg.ConsoleDisplay{},
	"saint_os/ConsoleAlert":              msg.ConsoleAlert{},
	"saint_os/SystemStatus":              msg.SystemStatus{},
	"saint_os/NodeSummary":               msg.NodeSummary{},
	"saint_os/InputStatus":               msg.InputStatus{},
	"saint_os/SensorReading":             msg.SensorReading{},
	"saint_os/SensorReadings":            msg.SensorReadings{},
	"saint_os/PowerState":                msg.PowerState{},
	"saint_os/BalanceState":              msg.BalanceState{},
	"saint_os/SessionStatus":             msg.SessionStatus{},
	"saint_os/ControlCommand":            msg.ControlCommand{},
	"saint_os/AdoptNode_Request":         msg.AdoptNodeRequest{},
	"saint_os/AdoptNode_Response":        msg.AdoptNodeResponse{},
	"saint_os/ResetNode_Request":         msg.ResetNodeRequest{},
	"saint_os/ResetNode_Response":        msg.ResetNodeResponse{},
	"saint_os/GPIOProbe_Request":         msg.GPIOProbeRequest{},
	"saint_os/GPIOProbe_Response":        msg.GPIOProbeResponse{},
	"saint_os/FirmwareCheck_Request":     msg.FirmwareCheckRequest{},
	"saint_os/FirmwareCheck_Response":    msg.FirmwareCheckResponse{},
	"saint_os/FirmwareDownload_Request":  msg.FirmwareDownloadRequest{},
	"saint_os/FirmwareDownload_Response": msg.FirmwareDownloadResponse{},
	"saint_os/SystemCommand_Request":     msg.SystemCommandRequest{},
	"saint_os/SystemCommand_Response":    msg.SystemCommandResponse{},
	"saint_os/GetSystemStatus_Request":   msg.SystemStatusRequest{},
	// The bus answers with a bare SystemStatus; a ROS 2 service
	// response is a message, so the bridge puts it in "status".
	"saint_os/GetSystemStatus_Response": struct {
		Status msg.SystemStatus `json:"status"`
	}{},
	"saint_os/GetAvailableMotors_Request":  msg.GetAvailableMotorsRequest{},
	"saint_os/GetAvailableMotors_Response": msg.GetAvailableMotorsResponse{},
	"saint_os/RequestControl_Request":      msg.RequestControlRequest{},
	"saint_os/RequestControl_Response":     msg.RequestControlResponse{},
	"saint_os/ReleaseControl_Request":      msg.ReleaseControlRequest{},
	"saint_os/ReleaseControl_Response":     msg.ReleaseControlResponse{},
	"saint_os/ResetZero_Request":           msg.ResetZeroRequest{},
	"saint_os/ResetZero_Response":          msg.ResetZeroResponse{},
	"saint_os/ArmHome_Request":             msg.ArmHomeRequest{},
	"saint_os/ArmHome_Response":            msg.ArmHomeResponse{},
	"saint_os/BalanceConsole_Request":      msg.BalanceConsoleRequest{},
	"saint_os/BalanceConsole_Response":     msg.BalanceConsoleResponse{},
}

// noGoType are interfaces that exist only on the ROS 2 side, and the
// standard messages the bridge converts to rather than mirrors.
var noGoType = map[string]string{
	"saint_os/NamedValue":                    "a bus map[string]float32 is a NamedValue[] in ROS 2",
	"sensor_msgs/Imu":                        "the bridge builds it from the balance base's state",
	"sensor_msgs/BatteryState":               "the bridge builds it from PowerState",
	"geometry_msgs/TransformStamped":         "the bridge builds /tf from the URDF model, joint states and odometry",
	"tf2_msgs/TFMessage":                     "the bridge builds /tf from the URDF model, joint states and odometry",
	"std_msgs/String":                        "/robot_description: the bridge writes the URDF model",
	"rmw_dds_common/Gid":                     "ROS 2's graph information, which the bridge writes about itself",
	"rmw_dds_common/NodeEntitiesInfo":        "ROS 2's graph information, which the bridge writes about itself",
	"rmw_dds_common/ParticipantEntitiesInfo": "ROS 2's graph information, which the bridge writes about itself",
	"rosgraph_msgs/Clock":                    "the bridge builds it from the simulation clock (bridge.SimClock)",
}

// busOnly are JSON fields of the Go types that stay on the bus: the
// server fills them for its nodes, and a ROS 2 client has no business
// setting them.
var busOnly = map[string]string{
	"saint_os/AdoptNode_Request.config":                   "the server sends the role configuration to the node",
	"saint_os/AdoptNode_Request.config_version":           "the server sends the role configuration to the node",
	"saint_os/AdoptNode_Request.assigned_by":              "the server records who adopted the node",
	"saint_os/AdoptNode_Request.server_address":           "the server tells the node where it is",
	"saint_os/NodeGPIOStatus.bus_ca_sha256":               "the bus's TLS CA the node pinned, for the adopt page; not part of the ROS 2 interface",
	"saint_os/SystemStatus.bus_ca_sha256":                 "the bus's TLS CA, for comparing with what nodes pinned; not part of the ROS 2 interface",
	"saint_os/FirmwareCheck_Response.downgrade_signature": "the release key's permission for a node to go back to an older version: only the nodes' own firmware check uses it, and a ROS 2 client installs no firmware",
	"saint_os/SessionStatus.session":                      "a node middleware's tag of its latest session, by which the root middleware follows its node sessions; the root's own session_status has none",
}

func TestInterfacesAgreeWithBusTypes(t *testing.T) {
	reg, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range reg.Messages() {
		name := m.FullName()
		if _, ok := noGoType[name]; ok {
			continue
		}
		v, ok := goTypes[name]
		if !ok {
			t.Errorf("%s has no Go type in this test's table: add it, or to noGoType with the reason", name)
			continue
		}
		checkFields(t, reg, m, reflect.TypeOf(v))
	}
	for name := range goTypes {
		if _, ok := reg.Message(name); !ok {
			t.Errorf("%s is in the table but has no .msg or .srv", name)
		}
	}
}

func checkFields(t *testing.T, reg *Registry, m *Message, gt reflect.Type) {
	t.Helper()
	goFields := jsonFields(gt)
	for _, f := range m.Fields {
		sf, ok := goFields[f.Name]
		if !ok {
			t.Errorf("%s.%s (%s): no JSON field %q in Go type %s", m.FullName(), f.Name, f.Type, f.Name, gt)
			continue
		}
		delete(goFields, f.Name)
		if want := rosType(t, sf.Type); want != f.Type.String() {
			t.Errorf("%s.%s: .msg says %s, Go field %s.%s (%s) is %s", m.FullName(), f.Name, f.Type, gt, sf.Name, sf.Type, want)
		}
	}
	for name, sf := range goFields {
		if _, ok := busOnly[m.FullName()+"."+name]; ok {
			continue
		}
		t.Errorf("%s: Go field %s.%s (json %q) is not in the .msg: add it there, or to busOnly with the reason", m.FullName(), gt, sf.Name, name)
	}
}

func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// rosType is the .msg type a Go field must be declared as.
func rosType(t *testing.T, gt reflect.Type) string {
	switch gt.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return gt.Kind().String()
	case reflect.Int:
		// A Go int on the bus is a JSON number well inside int32
		// (pins, milliseconds, motor ids, percentages).
		return "int32"
	case reflect.Slice:
		return rosType(t, gt.Elem()) + "[]"
	case reflect.Array:
		return rosType(t, gt.Elem()) + "[" + strconv.Itoa(gt.Len()) + "]"
	case reflect.Map:
		if gt.Key().Kind() == reflect.String && gt.Elem().Kind() == reflect.Float32 {
			return "saint_os/NamedValue[]"
		}
	case reflect.Struct:
		for name, v := range goTypes {
			if reflect.TypeOf(v) == gt {
				return name
			}
		}
	}
	t.Errorf("Go type %s has no ROS 2 equivalent in this test", gt)
	return "?"
}

func TestCMakeListsNamesEveryInterface(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("saint_os", "CMakeLists.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range []string{"msg", "srv"} {
		ents, err := os.ReadDir(filepath.Join("saint_os", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			files = append(files, dir+"/"+e.Name())
		}
	}
	sort.Strings(files)
	for _, f := range files {
		if !strings.Contains(string(src), `"`+f+`"`) {
			t.Errorf("CMakeLists.txt does not list %q in rosidl_generate_interfaces", f)
		}
	}
}
