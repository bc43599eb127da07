package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/ros2"
)

// ros2Run is what the robot publishes on topics that have a ROS 2 type,
// and one that has none, with the ROS 2 type each must be stored as ("" for
// JSON) and a fresh value of its Go type to decode the stored message into.
var ros2Run = []struct {
	topic, schema string
	value, into   any
}{
	{msg.TopicTracksOdom, "nav_msgs/msg/Odometry", msg.Odometry{
		Header:       msg.Header{Stamp: msg.Time{Sec: 12, Nanosec: 345000000}, FrameID: "odom"},
		ChildFrameID: "base_link",
		Pose: msg.PoseWithCovariance{Pose: msg.Pose{Position: msg.Point{X: 1.25, Y: -0.5},
			Orientation: msg.Quaternion{Z: 0.3826834323650898, W: 0.9238795325112867}},
			Covariance: [36]float64{0: 0.01, 7: 0.01, 35: 0.05}},
		Twist: msg.TwistWithCovariance{Twist: msg.Twist{Linear: msg.Vector3{X: 0.4}, Angular: msg.Vector3{Z: -0.2}}},
	}, &msg.Odometry{}},
	{msg.TopicHeadState, "saint_os/msg/HeadState", msg.HeadState{Pan: 12.5, Tilt: -3.25, Roll: 0.1, CameraActive: true, Jaw: 0.3}, &msg.HeadState{}},
	{"/saint/arms/left/joint_states", "sensor_msgs/msg/JointState", msg.JointStates{
		Header: msg.Header{FrameID: "left_arm"}, Name: []string{"j0", "j1"},
		Position: []float64{0.1, -0.2}, Velocity: []float64{0, 0.5}, Effort: []float64{1.5, 2},
	}, &msg.JointStates{}},
	{"/saint/nodes/sim-head/status", "saint_os/msg/NodeStatus", msg.NodeStatus{NodeID: "sim-head", State: "ACTIVE", Role: "head",
		FirmwareVersion: "1.2.3", CPUTemp: 41.5}, &msg.NodeStatus{}},
	{msg.TopicTracksPower, "saint_os/msg/PowerState", msg.PowerState{Voltage: 12.1, Current: 1.5, Power: 18.15, Present: true}, &msg.PowerState{}},
	{msg.TopicRouterInput, "", msg.RouterInput{Source: msg.SourceWebSocket, Target: "head", Command: "move",
		Values: map[string]float32{"pan": 25}}, &msg.RouterInput{}},
	// A camera frame published in process reaches the recorder as a value
	// and is stored without JSON (ChannelSpec.EncodeValue).
	{msg.TopicHeadCameraImageRaw, "sensor_msgs/msg/Image", msg.Image{Header: msg.Header{Stamp: msg.Time{Sec: 3, Nanosec: 7}, FrameID: "head_camera"},
		Height: 2, Width: 2, Encoding: msg.ImageRGB8, Step: 6, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}, &msg.Image{}},
}

func TestROS2ChannelsRoundTrip(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.mcap")
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	rec, err := record.Start(record.Options{Bus: sub, Exec: ex, File: file})
	if err != nil {
		t.Fatal(err)
	}
	ex.After(10*time.Millisecond, func() {
		for _, r := range ros2Run {
			if err := pub.Publish(r.topic, r.value); err != nil {
				t.Error(err)
			}
		}
	})
	if err := ex.RunFor(context.Background(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}

	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	dec := record.NewDecoder()
	seen := map[string]bool{}
	if _, err := record.Read(file, func(m record.Message) error {
		for _, r := range ros2Run {
			if r.topic != m.Topic {
				continue
			}
			seen[m.Topic] = true
			if r.schema == "" {
				if m.Channel.MessageEncoding != "json" || m.Schema.Encoding != "jsonschema" {
					t.Errorf("%s: %s/%s, want json/jsonschema", m.Topic, m.Channel.MessageEncoding, m.Schema.Encoding)
				}
			} else {
				checkROS2Message(t, reg, m, r.schema)
			}
			data, err := dec.JSON(m)
			if err != nil {
				t.Errorf("%s: %v", m.Topic, err)
				return nil
			}
			into := reflect.New(reflect.TypeOf(r.into).Elem()).Interface()
			if err := json.Unmarshal(data, into); err != nil {
				t.Errorf("%s: decoded %s: %v", m.Topic, data, err)
				return nil
			}
			if got := reflect.ValueOf(into).Elem().Interface(); !reflect.DeepEqual(got, r.value) {
				t.Errorf("%s: round trip\n got %+v\nwant %+v", m.Topic, got, r.value)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range ros2Run {
		if !seen[r.topic] {
			t.Errorf("%s is not in the recording", r.topic)
		}
	}

	// Replay puts the bus's JSON back on the bus.
	rex := executor.NewVirtual()
	rb := mem.New()
	defer rb.Close()
	var odom msg.Odometry
	var heads int
	if _, err := bus.SubscribeJSON(rb, msg.TopicTracksOdom, bus.QoS{}, rex, func(_ string, o msg.Odometry) { odom = o }); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(rb, msg.TopicHeadState, bus.QoS{}, rex, func(_ string, h msg.HeadState) {
		if reflect.DeepEqual(h, ros2Run[1].value) {
			heads++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := record.Replay(record.ReplayOptions{File: file, Bus: rb, Exec: rex, Speed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := rex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(odom, ros2Run[0].value) || heads != 1 {
		t.Errorf("replayed odometry %+v, %d head states equal to the recorded one", odom, heads)
	}
}

// checkROS2Message checks a stored message's channel and bytes are what
// rosbag2 writes for the type: "cdr" messages with the CDR_LE
// encapsulation header, a "ros2msg" schema with the type's definition
// and its dependencies.
func checkROS2Message(t *testing.T, reg *ros2.Registry, m record.Message, schema string) {
	t.Helper()
	if m.Channel.MessageEncoding != "cdr" || m.Schema == nil || m.Schema.Encoding != "ros2msg" || m.Schema.Name != schema {
		t.Errorf("%s: channel %s, schema %+v: want cdr, ros2msg %s", m.Topic, m.Channel.MessageEncoding, m.Schema, schema)
		return
	}
	if !bytes.HasPrefix(m.Data, []byte{0, 1, 0, 0}) {
		t.Errorf("%s: message starts % x, want the CDR_LE encapsulation header 00 01 00 00", m.Topic, m.Data[:4])
	}
	parts := strings.Split(schema, "/")
	want, _ := reg.Message(parts[0] + "/" + parts[2])
	if !bytes.Equal(m.Schema.Data, reg.Schema(want)) {
		t.Errorf("%s: schema data is not the type's ros2msg definition:\n%s", m.Topic, m.Schema.Data)
	}
}

func TestROS2EncodingFallsBackToJSON(t *testing.T) {
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := reg.Message("saint_os/HeadState")
	spec, err := record.ROS2{Registry: reg, Type: m}.Channel("/saint/head/state", []byte(`{"pan":"left"}`))
	if err != nil || spec.MessageEncoding != "json" {
		t.Errorf("a first message that does not encode: %+v, %v; want a JSON channel", spec, err)
	}
	spec, err = record.ROS2{Registry: reg, Type: m}.Channel("/saint/head/state", []byte(`{"pan":1}`))
	if err != nil || spec.MessageEncoding != "cdr" {
		t.Fatalf("%+v, %v", spec, err)
	}
	if _, err := spec.Encode([]byte(`{"pan":"left"}`)); err == nil || !strings.Contains(err.Error(), "pan") {
		t.Errorf("a later message that does not encode: %v, want an error naming pan", err)
	}
}

// BenchmarkROS2EncodeOdometry is what storing or serving a message as CDR
// costs over passing its JSON on: one odometry message (the robot's 50 Hz
// topic) from the bus's JSON to CDR.
//
//	go test -run '^$' -bench ROS2Encode -benchmem ./record
func BenchmarkROS2EncodeOdometry(b *testing.B) {
	types, err := record.NewROS2Types()
	if err != nil {
		b.Fatal(err)
	}
	payload, _ := json.Marshal(ros2Run[0].value)
	spec, err := types.Encoding(msg.TopicTracksOdom).Channel(msg.TopicTracksOdom, payload)
	if err != nil || spec.Encode == nil {
		b.Fatal(spec, err)
	}
	b.SetBytes(int64(len(payload)))
	for range b.N {
		if _, err := spec.Encode(payload); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecoderErrors(t *testing.T) {
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	head, _ := reg.Message("saint_os/HeadState")
	good, err := reg.Encode(head, map[string]any{"pan": 10.0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cdr := &mcap.Channel{MessageEncoding: "cdr"}
	schema := &mcap.Schema{Name: head.TypeName(), Encoding: "ros2msg", Data: reg.Schema(head)}
	dec := record.NewDecoder()
	if data, err := dec.JSON(record.Message{Topic: "/h", Channel: cdr, Schema: schema, Data: good}); err != nil || !strings.Contains(string(data), `"pan":10`) {
		t.Errorf("good message: %s, %v", data, err)
	}
	for _, c := range []struct {
		name string
		m    record.Message
		want string
	}{
		{"truncated", record.Message{Topic: "/h", Channel: cdr, Schema: schema, Data: good[:7]}, "ends early"},
		{"no schema", record.Message{Topic: "/h", Channel: cdr, Data: good}, "needs a ros2msg schema"},
		{"bad schema", record.Message{Topic: "/h", Channel: cdr, Schema: &mcap.Schema{Name: "x/msg/Y", Encoding: "ros2msg", Data: []byte("z/W w\n")}, Data: good},
			"z/W is not defined"},
		{"other encoding", record.Message{Topic: "/h", Channel: &mcap.Channel{MessageEncoding: "protobuf"}, Data: good}, `"protobuf"`},
	} {
		if _, err := dec.JSON(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// BenchmarkROS2EncodeImage encodes one head camera frame (640×480 rgb8,
// the fixtures' camera) from the bus's JSON to sensor_msgs/msg/Image CDR,
// as a recording and the Foxglove server do for every frame.
func BenchmarkROS2EncodeImage(b *testing.B) {
	types, err := record.NewROS2Types()
	if err != nil {
		b.Fatal(err)
	}
	const w, h = 640, 480
	data := make([]byte, w*h*3)
	for i := range data {
		data[i] = byte(i * 7)
	}
	payload, _ := json.Marshal(msg.Image{Header: msg.Header{FrameID: "head"}, Width: w, Height: h, Encoding: msg.ImageRGB8, Step: 3 * w, Data: data})
	spec, err := types.Encoding(msg.TopicHeadCameraImageRaw).Channel(msg.TopicHeadCameraImageRaw, payload)
	if err != nil || spec.Encode == nil {
		b.Fatal(spec, err)
	}
	b.SetBytes(int64(len(payload)))
	for range b.N {
		if _, err := spec.Encode(payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkROS2EncodeImageValue is BenchmarkROS2EncodeImage from the
// frame as a value (ChannelSpec.EncodeValue), as the Foxglove server
// encodes a frame published in its process.
func BenchmarkROS2EncodeImageValue(b *testing.B) {
	types, err := record.NewROS2Types()
	if err != nil {
		b.Fatal(err)
	}
	const w, h = 640, 480
	data := make([]byte, w*h*3)
	for i := range data {
		data[i] = byte(i * 7)
	}
	img := &msg.Image{Header: msg.Header{FrameID: "head"}, Width: w, Height: h, Encoding: msg.ImageRGB8, Step: 3 * w, Data: data}
	spec, err := types.Encoding(msg.TopicHeadCameraImageRaw).Channel(msg.TopicHeadCameraImageRaw, []byte("{}"))
	if err != nil || spec.EncodeValue == nil {
		b.Fatal(spec, err)
	}
	b.SetBytes(int64(len(data)))
	for range b.N {
		if _, err := spec.EncodeValue(img); err != nil {
			b.Fatal(err)
		}
	}
}

// TestROS2EncodeImageValue: a camera frame encoded from its value is the
// same CDR, byte for byte, as from its JSON, and decodes back to the
// frame; a value of another type is refused.
func TestROS2EncodeImageValue(t *testing.T) {
	types, err := record.NewROS2Types()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := types.Encoding(msg.TopicHeadCameraImageRaw).Channel(msg.TopicHeadCameraImageRaw, []byte("{}"))
	if err != nil || spec.EncodeValue == nil || spec.SchemaName != "sensor_msgs/msg/Image" {
		t.Fatalf("camera channel %+v, %v: want sensor_msgs/msg/Image with EncodeValue", spec, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range [][2]uint32{{0, 0}, {1, 1}, {3, 2}, {64, 48}} {
		w, h := size[0], size[1]
		data := make([]byte, 3*w*h)
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		img := &msg.Image{Header: msg.Header{Stamp: msg.Time{Sec: -int32(rng.IntN(1000)), Nanosec: rng.Uint32()}, FrameID: "head_camera"},
			Width: w, Height: h, Encoding: msg.ImageRGB8, IsBigEndian: uint8(w % 2), Step: 3 * w, Data: data}
		payload, err := json.Marshal(img)
		if err != nil {
			t.Fatal(err)
		}
		want, err := spec.Encode(payload)
		if err != nil {
			t.Fatal(err)
		}
		got, err := spec.EncodeValue(img)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%dx%d: from the value %d bytes, from JSON %d, not the same", w, h, len(got), len(want))
		}
		m, _ := types.Type(msg.TopicHeadCameraImageRaw)
		back, _, err := types.Registry().Decode(m, got)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(back)
		var again msg.Image
		if err := json.Unmarshal(js, &again); err != nil {
			t.Fatalf("%dx%d: decoded %s: %v", w, h, js, err)
		}
		if again.Header != img.Header || again.Width != w || again.Height != h || again.Step != img.Step ||
			again.IsBigEndian != img.IsBigEndian || !bytes.Equal(again.Data, data) {
			t.Errorf("%dx%d: decoded %+v, want the frame back", w, h, again.Header)
		}
	}
	if _, err := spec.EncodeValue(&msg.Odometry{}); err == nil || !strings.Contains(err.Error(), "is not a sensor_msgs/msg/Image") {
		t.Errorf("an odometry value: %v, want refused", err)
	}
}
