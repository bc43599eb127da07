package ros2

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

func loadT(t *testing.T) *Registry {
	t.Helper()
	reg, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// roundTrip encodes a bus value as name, decodes it back and returns it as
// the same Go type.
func roundTrip[T any](t *testing.T, reg *Registry, name string, v T) T {
	t.Helper()
	m, ok := reg.Message(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	data, err := reg.Encode(m, jsonValue(t, v), nil)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := reg.Decode(m, data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	var got T
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTwistBytes(t *testing.T) {
	reg := loadT(t)
	m, _ := reg.Message("geometry_msgs/Twist")
	data, err := reg.Encode(m, jsonValue(t, msg.Twist{Linear: msg.Vector3{X: 0.5}, Angular: msg.Vector3{Z: -1.25}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 1, 0, 0}
	for _, f := range []float64{0.5, 0, 0, 0, 0, -1.25} {
		want = binary.LittleEndian.AppendUint64(want, math.Float64bits(f))
	}
	if !bytes.Equal(data, want) {
		t.Errorf("Twist = % x\nwant    % x", data, want)
	}
}

func TestAlignmentAndRequestHeader(t *testing.T) {
	reg := loadT(t)
	hs, _ := reg.Message("saint_os/HeadState")
	data, err := reg.Encode(hs, jsonValue(t, msg.HeadState{Pan: 1, CameraActive: true, Jaw: 0.5}), nil)
	if err != nil {
		t.Fatal(err)
	}
	// pan tilt roll (12), camera_active (1), 3 bytes of padding, jaw (4),
	// eyes_pan and eyes_tilt (8).
	if len(data) != 4+28 || data[4+12] != 1 || math.Float32frombits(binary.LittleEndian.Uint32(data[4+16:])) != 0.5 {
		t.Errorf("HeadState = % x", data)
	}

	svc, _ := reg.Service("saint_os/AdoptNode")
	hdr := RequestHeader{GUID: 0x0102030405060708, Seq: 42}
	data, err = reg.Encode(svc.Request, jsonValue(t, msg.AdoptNodeRequest{NodeID: "sim-head", Role: "head"}), &hdr)
	if err != nil {
		t.Fatal(err)
	}
	if g, s := binary.LittleEndian.Uint64(data[4:]), binary.LittleEndian.Uint64(data[12:]); g != hdr.GUID || s != 42 {
		t.Errorf("header = %x %d, want %x 42", g, s, hdr.GUID)
	}
	if got := binary.LittleEndian.Uint32(data[20:]); got != uint32(len("sim-head")+1) {
		t.Errorf("node_id length = %d", got)
	}
	v, gotHdr, err := reg.Decode(svc.Request, data)
	if err != nil {
		t.Fatal(err)
	}
	if gotHdr != hdr || v["node_id"] != "sim-head" || v["role"] != "head" {
		t.Errorf("decoded %v %+v", v, gotHdr)
	}
}

func TestRoundTrips(t *testing.T) {
	reg := loadT(t)
	odom := msg.Odometry{Header: msg.Header{Stamp: msg.Time{Sec: 12, Nanosec: 5e8}, FrameID: "odom"}, ChildFrameID: "base_link"}
	odom.Pose.Pose.Position.X = 1.5
	odom.Pose.Pose.Orientation = msg.IdentityQuaternion()
	odom.Pose.Covariance[35] = 0.01
	odom.Twist.Twist.Linear.X = 0.8
	if got := roundTrip(t, reg, "nav_msgs/Odometry", odom); !reflect.DeepEqual(got, odom) {
		t.Errorf("Odometry round trip\n got %+v\nwant %+v", got, odom)
	}
	img := msg.Image{Header: msg.Header{FrameID: "head_camera"}, Height: 2, Width: 2, Encoding: msg.ImageRGB8, Step: 6, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	if got := roundTrip(t, reg, "sensor_msgs/Image", img); !reflect.DeepEqual(got, img) {
		t.Errorf("Image round trip\n got %+v\nwant %+v", got, img)
	}
	st := msg.RouteStatus{State: msg.RouterRouting, Outputs: []msg.OutputState{{Target: "tracks", RouteIDs: []string{"a"}, Values: map[string]float32{"linear": 0.5, "angular": -1}}}, EStopActive: true}
	got := roundTrip(t, reg, "saint_os/RouteStatus", st)
	if !reflect.DeepEqual(got.Outputs[0].Values, st.Outputs[0].Values) || !got.EStopActive || got.State != st.State {
		t.Errorf("RouteStatus round trip\n got %+v\nwant %+v", got, st)
	}
	gpio := msg.NodeGPIOStatus{NodeID: "n1", Pins: []msg.GPIOPin{{PinNumber: 11, PinName: "GPIO17", InUse: true}}, UptimeSeconds: 1 << 31}
	if got := roundTrip(t, reg, "saint_os/NodeGPIOStatus", gpio); got.Pins[0] != gpio.Pins[0] || got.UptimeSeconds != gpio.UptimeSeconds {
		t.Errorf("NodeGPIOStatus round trip\n got %+v\nwant %+v", got, gpio)
	}
}

func TestBadInput(t *testing.T) {
	reg := loadT(t)
	twist, _ := reg.Message("geometry_msgs/Twist")
	gpio, _ := reg.Message("saint_os/GPIOPin")
	for _, tc := range []struct {
		name string
		m    *Message
		json string
		want string
	}{
		{"string for number", twist, `{"linear":{"x":"fast"}}`, "linear.x: want a number"},
		{"out of range", gpio, `{"pin_number":300}`, "pin_number: 300 is out of range for uint8"},
		{"fraction", gpio, `{"pin_number":1.5}`, "want an integer"},
		{"not an object", twist, `[1]`, "want an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.json))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			_, err := reg.Encode(tc.m, v, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}

	good, _ := reg.Encode(twist, map[string]any{}, nil)
	nan := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(nan[4:], math.Float64bits(math.NaN()))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"NaN", nan, "linear.x: NaN is not a finite number"},
		{"short", good[:20], "sample ends early"},
		{"empty", nil, "no sample"},
		{"XCDR2", append([]byte{0, 7, 0, 0}, good[4:]...), "not XCDR1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := reg.Decode(twist, tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	hs, _ := reg.Message("saint_os/NodeAnnouncement")
	long, _ := reg.Encode(hs, map[string]any{"node_id": "x"}, nil)
	binary.LittleEndian.PutUint32(long[4:], 1<<30)
	if _, _, err := reg.Decode(hs, long); err == nil || !strings.Contains(err.Error(), "longer than the sample") {
		t.Errorf("huge string length: err = %v", err)
	}
}
