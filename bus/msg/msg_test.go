package msg_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

// allTypes is every message type, as pointers to zero values.
func allTypes() []any {
	return []any{
		// node.go
		&msg.GPIOPin{}, &msg.PeripheralInfo{}, &msg.NodeGPIOStatus{}, &msg.NodeAnnouncement{},
		&msg.NodeStatus{}, &msg.AdoptNodeRequest{}, &msg.AdoptNodeResponse{},
		&msg.ResetNodeRequest{}, &msg.ResetNodeResponse{}, &msg.GPIOProbeRequest{}, &msg.GPIOProbeResponse{},
		&msg.FirmwareCheckRequest{}, &msg.FirmwareCheckResponse{},
		&msg.FirmwareDownloadRequest{}, &msg.FirmwareDownloadResponse{},
		// geometry.go, sensor.go
		&msg.Time{}, &msg.Header{}, &msg.Vector3{}, &msg.Point{}, &msg.Quaternion{}, &msg.Transform{},
		&msg.Pose{}, &msg.Twist{}, &msg.PoseWithCovariance{}, &msg.TwistWithCovariance{}, &msg.Odometry{},
		&msg.Image{}, &msg.SensorReading{}, &msg.SensorReadings{},
		// roles
		&msg.HeadState{}, &msg.HeadCommand{},
		&msg.ArmState{}, &msg.ArmCommand{}, &msg.GripperCommand{}, &msg.GripperState{},
		&msg.TrackState{}, &msg.MotorCurrent{}, &msg.EStop{},
		&msg.ConsoleInput{}, &msg.ConsoleOverride{}, &msg.ConsoleDisplay{}, &msg.ConsoleAlert{},
		// server
		&msg.LiveLinkFrame{}, &msg.LiveLinkSubject{}, &msg.RCChannelState{}, &msg.RCReceiverState{},
		&msg.RouteStatus{}, &msg.RouteState{}, &msg.OutputState{},
		&msg.SystemStatusRequest{}, &msg.SystemStatus{}, &msg.NodeSummary{}, &msg.InputStatus{},
		&msg.SystemCommandRequest{}, &msg.SystemCommandResponse{},
	}
}

// fill sets every field of v to a non-zero value derived from *n.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n%100 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n%1000) + 0.25)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := 0; i < 2; i++ {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n)
			fill(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func TestRoundTrip(t *testing.T) {
	for _, p := range allTypes() {
		typ := reflect.TypeOf(p).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			n := 0
			want := reflect.New(typ)
			fill(want.Elem(), &n)
			data, err := json.Marshal(want.Interface())
			if err != nil {
				t.Fatal(err)
			}
			got := reflect.New(typ)
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(got.Interface()); err != nil {
				t.Fatalf("decoding %s: %v", data, err)
			}
			if !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Errorf("round trip changed the value:\n%s\n%+v\n%+v", data, want.Elem(), got.Elem())
			}
		})
	}
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestFieldNames: every exported field has an explicit snake_case JSON
// name, so that the wire format never follows a Go identifier by accident.
func TestFieldNames(t *testing.T) {
	for _, p := range allTypes() {
		typ := reflect.TypeOf(p).Elem()
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !snake.MatchString(name) {
				t.Errorf("%s.%s has JSON name %q, want snake_case", typ.Name(), f.Name, name)
			}
		}
	}
}

func jsonNames(typ reflect.Type) []string {
	var names []string
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// baseMsgs are these messages' base .msg definitions, verbatim as first
// published: the fields of their files in ros2/saint_os/msg without the
// lines marked "addition", which extra lists.
var baseMsgs = []struct {
	def   string
	v     any
	extra []string // documented additions
}{
	{`# HeadState.msg
float32 pan      # -180 to 180 degrees
float32 tilt     # -90 to 90 degrees
float32 roll     # -45 to 45 degrees
bool camera_active`, msg.HeadState{}, []string{"jaw", "eyes_pan", "eyes_tilt"}},
	{`# HeadCommand.msg
float32 pan
float32 tilt
float32 roll
float32 speed    # 0.0 to 1.0`, msg.HeadCommand{}, []string{"jaw", "eyes_pan", "eyes_tilt"}},
	{`# ArmState.msg
float32[] joint_positions    # Array of joint angles
float32[] joint_velocities
float32[] joint_efforts
bool in_motion
bool error_state
string error_message`, msg.ArmState{}, nil},
	{`# ArmCommand.msg
float32[] target_positions
float32 speed_factor         # 0.0 to 1.0
bool immediate               # Override current motion`, msg.ArmCommand{}, nil},
	{`# GripperCommand.msg
float32 position             # 0.0 (closed) to 1.0 (open)
float32 force                # Grip force limit`, msg.GripperCommand{}, nil},
	{`# TrackState.msg
float32 left_velocity
float32 right_velocity
float32 left_current
float32 right_current
bool estop_active
bool motors_enabled`, msg.TrackState{}, nil},
	{`# LiveLinkFrame.msg (internal)
string subject_name               # e.g., "FaceCapture", "UE_Character"
string subject_type               # "animation", "transform", "face", "camera"
uint64 frame_number
float64 timestamp
string[] property_names           # BlendShape names or bone names
float32[] property_values         # Corresponding values
geometry_msgs/Transform transform # For transform-based subjects`, msg.LiveLinkFrame{}, nil},
	{`# RCChannelState.msg
uint8 channel_number              # 1-16
uint16 raw_value                  # Raw receiver value
float32 normalized                # -1.0 to 1.0 (centered) or 0.0 to 1.0
bool failsafe                     # True if signal lost
uint64 last_update_ns             # Timestamp of last valid signal`, msg.RCChannelState{}, nil},
	{`# RCReceiverState.msg
string protocol                   # "pwm", "ppm", "sbus", "ibus", "crsf"
bool connected                    # Receiver communication active
bool failsafe                     # Transmitter signal lost
uint8 channel_count               # Number of active channels
RCChannelState[] channels         # All channel states
float32 rssi                      # Signal strength (if available)
uint32 frame_rate_hz              # Update rate`, msg.RCReceiverState{}, nil},
}

// TestBaseFields: the Go types have exactly the base definitions' field
// names plus the documented additions.
func TestBaseFields(t *testing.T) {
	for _, m := range baseMsgs {
		var want []string
		for _, line := range strings.Split(m.def, "\n") {
			line, _, _ = strings.Cut(line, "#")
			if f := strings.Fields(line); len(f) == 2 {
				want = append(want, f[1])
			}
		}
		want = append(want, m.extra...)
		slices.Sort(want)
		typ := reflect.TypeOf(m.v)
		if got := jsonNames(typ); !slices.Equal(got, want) {
			t.Errorf("%s fields %v, want %v", typ.Name(), got, want)
		}
	}
}

func strictDecode(t *testing.T, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s into %T: %v", data, v, err)
	}
}

// TestAPIExamples decodes the WebSocket API's documented examples whose
// payloads are these messages.
func TestAPIExamples(t *testing.T) {
	var st msg.HeadState
	strictDecode(t, `{"pan": 44.8, "tilt": -14.9, "roll": 0.0, "camera_active": true}`, &st)
	if want := (msg.HeadState{Pan: 44.8, Tilt: -14.9, CameraActive: true}); st != want {
		t.Errorf("HeadState = %+v, want %+v", st, want)
	}

	var cmd msg.HeadCommand
	strictDecode(t, `{"pan": 45.0, "tilt": -15.0, "speed": 0.5}`, &cmd)
	if want := (msg.HeadCommand{Pan: 45, Tilt: -15, Speed: 0.5}); cmd != want {
		t.Errorf("HeadCommand = %+v, want %+v", cmd, want)
	}

	// list_livelink_sources' response is a list of LiveLinkSubject.
	var resp struct {
		Sources []msg.LiveLinkSubject `json:"sources"`
	}
	strictDecode(t, `{
    "sources": [
      {
        "subject_name": "FaceCapture",
        "subject_type": "face",
        "source_ip": "192.168.1.50",
        "last_frame": 1705312800.123,
        "frame_rate": 60.0,
        "properties": ["headYaw", "headPitch", "headRoll", "jawOpen", "..."]
      },
      {
        "subject_name": "UE_Character",
        "subject_type": "animation",
        "source_ip": "192.168.1.100",
        "last_frame": 1705312800.125,
        "frame_rate": 30.0,
        "properties": ["Root", "Spine", "Head", "LeftArm.shoulder", "..."]
      }
    ]
  }`, &resp)
	if len(resp.Sources) != 2 || resp.Sources[0].SubjectType != msg.SubjectFace || resp.Sources[1].FrameRate != 30 ||
		resp.Sources[0].Properties[3] != "jawOpen" || resp.Sources[0].LastFrame != 1705312800.123 {
		t.Errorf("sources = %+v", resp.Sources)
	}

	// A ROS-style cmd_vel, as rosbridge would show it.
	var tw msg.Twist
	strictDecode(t, `{"linear": {"x": 0.5, "y": 0.0, "z": 0.0}, "angular": {"x": 0.0, "y": 0.0, "z": -0.2}}`, &tw)
	if tw.Linear.X != 0.5 || tw.Angular.Z != -0.2 {
		t.Errorf("Twist = %+v", tw)
	}
}

func TestImageData(t *testing.T) {
	img := msg.Image{Height: 1, Width: 2, Encoding: msg.ImageRGB8, Step: 6, Data: []byte{1, 2, 3, 4, 5, 6}}
	data, err := json.Marshal(img)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"data":"AQIDBAUG"`) {
		t.Errorf("image data not base64: %s", data)
	}
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 1, 500, time.UTC)
	st := msg.TimeOf(at)
	if st.Sec != int32(at.Unix()) || st.Nanosec != 500 {
		t.Errorf("TimeOf = %+v", st)
	}
	if !st.Time().Equal(at) {
		t.Errorf("Time() = %v, want %v", st.Time(), at)
	}
}

func TestLiveLinkProperty(t *testing.T) {
	f := msg.LiveLinkFrame{PropertyNames: []string{"headYaw", "jawOpen"}, PropertyValues: []float32{0.4, 0.1}}
	if v, ok := f.Property("jawOpen"); !ok || v != 0.1 {
		t.Errorf("Property(jawOpen) = %v, %v", v, ok)
	}
	if _, ok := f.Property("headRoll"); ok {
		t.Error("Property(headRoll) found")
	}
}

// TestTopicNames: every name is the exact string nodes and clients rely
// on, and a valid bus name.
func TestTopicNames(t *testing.T) {
	topics := map[string]string{
		msg.TopicHeadState:                  "/saint/head/state",
		msg.TopicHeadCmd:                    "/saint/head/cmd",
		msg.TopicHeadCameraImageRaw:         "/saint/head/camera/image_raw",
		msg.TopicHeadSensors:                "/saint/head/sensors",
		msg.ArmStateTopic(msg.ArmLeft):      "/saint/arms/left/state",
		msg.ArmStateTopic(msg.ArmRight):     "/saint/arms/right/state",
		msg.ArmCmdTopic(msg.ArmLeft):        "/saint/arms/left/cmd",
		msg.ArmCmdTopic(msg.ArmRight):       "/saint/arms/right/cmd",
		msg.GripperStateTopic(msg.ArmLeft):  "/saint/arms/left/gripper/state",
		msg.GripperStateTopic(msg.ArmRight): "/saint/arms/right/gripper/state",
		msg.GripperCmdTopic(msg.ArmLeft):    "/saint/arms/left/gripper/cmd",
		msg.GripperCmdTopic(msg.ArmRight):   "/saint/arms/right/gripper/cmd",
		msg.TopicTracksOdom:                 "/saint/tracks/odom",
		msg.TopicTracksState:                "/saint/tracks/state",
		msg.TopicTracksMotorCurrent:         "/saint/tracks/motor_current",
		msg.TopicTracksCmdVel:               "/saint/tracks/cmd_vel",
		msg.TopicTracksEStop:                "/saint/tracks/estop",
		msg.TopicConsoleInput:               "/saint/console/input",
		msg.TopicConsoleOverride:            "/saint/console/override",
		msg.TopicConsoleDisplay:             "/saint/console/display",
		msg.TopicConsoleAlerts:              "/saint/console/alerts",
		msg.TopicUnadopted:                  "/saint/nodes/unadopted",
		msg.NodeStatusTopic("pi-a1b2c3d4"):  "/saint/nodes/pi-a1b2c3d4/status",
		msg.NodeAnnounceTopic("pi-a1b2"):    "/saint/nodes/pi-a1b2/announce",
		msg.NodeAlertTopic("pi-a1b2"):       "/saint/nodes/pi-a1b2/alert",
		msg.TopicRCState:                    "/saint/rc/state",
		msg.TopicLiveLinkFrames:             "/saint/livelink/frames",
		msg.TopicLiveLinkSubjects:           "/saint/livelink/subjects",
		msg.TopicRouterStatus:               "/saint/router/status",
	}
	for got, want := range topics {
		if got != want {
			t.Errorf("topic %q, want %q", got, want)
		}
		if _, err := bus.TopicSubject(got, false); err != nil {
			t.Error(err)
		}
	}
	for _, wild := range []string{msg.TopicAllNodeStatus, msg.TopicAllNodeAnnounce} {
		if _, err := bus.TopicSubject(wild, true); err != nil {
			t.Error(err)
		}
	}
	for _, s := range []string{
		msg.ServiceFirmwareCheck, msg.ServiceFirmwareDownload, msg.ServiceAdopt, msg.ServiceReset,
		msg.LegacyServiceRoleConfig, msg.LegacyServiceValidateRole, msg.NodeRoleConfigService("n1"), msg.NodeValidateRoleService("n1"),
		msg.ServiceSystemStatus, msg.ServiceSystemShutdown,
		msg.ServiceSystemCommand, msg.NodeAdoptService("n1"), msg.NodeResetService("n1"),
		msg.NodeGPIOProbeService("n1"), msg.NodeUpdateService("n1"),
	} {
		if _, err := bus.ServiceSubject(s); err != nil {
			t.Error(err)
		}
	}
}

func TestPerNodeServiceNames(t *testing.T) {
	if got := msg.NodeValidateRoleService("pi-a1b2"); got != "/saint/nodes/pi-a1b2/validate_role" {
		t.Errorf("NodeValidateRoleService = %q", got)
	}
	if got := msg.NodeRoleConfigService("pi-a1b2"); got != "/saint/nodes/pi-a1b2/role_config" {
		t.Errorf("NodeRoleConfigService = %q", got)
	}
	for _, wild := range []string{msg.ServiceAllNodesValidateRole, msg.ServiceAllNodesRoleConfig} {
		if _, err := bus.TopicSubject(wild, true); err != nil {
			t.Errorf("%s: %v", wild, err)
		}
	}
	for name, want := range map[string]string{
		msg.NodeValidateRoleService("n1"): "n1",
		msg.NodeRoleConfigService("n-2"):  "n-2",
		msg.NodeStatusTopic("n_3"):        "n_3",
		msg.NodeAlertTopic("n-4"):         "n-4",
		msg.NodeValidateRoleService(""):   "",
		"/saint/nodes/validate_role":      "",
		"/saint/nodes/a.b/validate_role":  "",
		"/saint/node/n1/adopt":            "",
	} {
		id, ok := msg.NodeOfName(name)
		if id != want && ok || ok != (want != "") {
			t.Errorf("NodeOfName(%q) = %q, %v; want %q", name, id, ok, want)
		}
	}
}
