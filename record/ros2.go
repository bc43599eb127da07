package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
)

// ROS2 stores a topic as ROS 2 does: "cdr" messages (XCDR1 little
// endian with the 4-byte encapsulation header, as rosbag2 writes them)
// of Type, with a "ros2msg" schema named "pkg/msg/Name" holding Type's
// definition and those of the messages it uses. The bus payload (JSON)
// is turned into CDR by field name through Registry, as the ROS 2
// bridge does. If the topic's first message does not encode, the topic
// is stored as JSON instead, so nothing is lost.
type ROS2 struct {
	Registry *ros2.Registry
	Type     *ros2.Message
}

var _ Encoding = ROS2{}

// Channel implements Encoding.
func (e ROS2) Channel(topic string, first []byte) (ChannelSpec, error) {
	encode := func(payload []byte) ([]byte, error) {
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		return e.Registry.Encode(e.Type, v, nil)
	}
	if _, err := encode(first); err != nil {
		return JSON{}.Channel(topic, first)
	}
	spec := ChannelSpec{
		MessageEncoding: "cdr", SchemaName: e.Type.TypeName(), SchemaEncoding: "ros2msg",
		Schema: e.Registry.Schema(e.Type), Encode: encode,
	}
	if e.Type.TypeName() == imageType {
		spec.EncodeValue = func(v any) ([]byte, error) {
			img, ok := v.(*msg.Image)
			if !ok {
				return nil, fmt.Errorf("record: %s: a %T is not a %s", topic, v, imageType)
			}
			return e.Registry.Encode(e.Type, imageFields(img), nil)
		}
	}
	return spec, nil
}

// imageType is the ROS 2 type of camera frames, which EncodeValue takes
// as *msg.Image: a 640×480 frame's JSON is 1.2 MB of base64, milliseconds
// to make and to read, where its CDR is a header and a copy of the pixels.
const imageType = "sensor_msgs/msg/Image"

// imageFields is img as Registry.Encode takes it: the fields by their
// JSON names, the pixels as bytes.
func imageFields(img *msg.Image) map[string]any {
	return map[string]any{
		"header": map[string]any{
			"stamp":    map[string]any{"sec": int64(img.Header.Stamp.Sec), "nanosec": int64(img.Header.Stamp.Nanosec)},
			"frame_id": img.Header.FrameID,
		},
		"height": int64(img.Height), "width": int64(img.Width), "encoding": img.Encoding,
		"is_bigendian": int64(img.IsBigEndian), "step": int64(img.Step), "data": img.Data,
	}
}

// ROS2Types chooses the ROS 2 encoding for the bus topics that have a
// ROS 2 interface type: the ones the ROS 2 bridge maps
// (bridge.BusTypes), each node's status, the motor middleware's topics
// in any robot namespace.
type ROS2Types struct {
	reg   *ros2.Registry
	types map[string]string
}

// NewROS2Types loads the interface definitions and the bridge's table.
func NewROS2Types() (*ROS2Types, error) {
	reg, err := ros2.Load()
	if err != nil {
		return nil, err
	}
	return &ROS2Types{reg: reg, types: bridge.BusTypes()}, nil
}

// Registry is the interface definitions used.
func (t *ROS2Types) Registry() *ros2.Registry { return t.reg }

// Type returns the ROS 2 message topic is stored as, or false.
func (t *ROS2Types) Type(topic string) (*ros2.Message, bool) {
	name, ok := bridge.BusType(t.types, topic)
	if !ok {
		return nil, false
	}
	return t.reg.Message(name)
}

// Encoding returns ROS2 for a topic with a type, and otherwise what
// JSONEncoding returns.
func (t *ROS2Types) Encoding(topic string) Encoding {
	if m, ok := t.Type(topic); ok {
		return ROS2{Registry: t.reg, Type: m}
	}
	return JSONEncoding(topic)
}

var defaultTypes = sync.OnceValues(NewROS2Types)

// Decoder turns stored messages back into the bus's JSON: a "json"
// message as it is, a "cdr" message with a "ros2msg" schema decoded with
// the definitions in that schema, so a recording replays with the
// definitions it was written with. It keeps each schema parsed.
type Decoder struct {
	schemas map[*mcap.Schema]*ros2Schema
}

type ros2Schema struct {
	reg *ros2.Registry
	m   *ros2.Message
	err error
}

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder { return &Decoder{schemas: map[*mcap.Schema]*ros2Schema{}} }

// JSON returns m's payload as bus JSON.
func (d *Decoder) JSON(m Message) ([]byte, error) {
	switch m.Channel.MessageEncoding {
	case "json":
		return m.Data, nil
	case "cdr":
	default:
		return nil, fmt.Errorf("record: %s: message encoding %q is neither json nor cdr", m.Topic, m.Channel.MessageEncoding)
	}
	if m.Schema == nil || m.Schema.Encoding != "ros2msg" {
		return nil, fmt.Errorf("record: %s: a cdr channel needs a ros2msg schema", m.Topic)
	}
	s, ok := d.schemas[m.Schema]
	if !ok {
		s = &ros2Schema{}
		s.reg, s.m, s.err = ros2.ParseSchema(m.Schema.Name, m.Schema.Data)
		d.schemas[m.Schema] = s
	}
	if s.err != nil {
		return nil, fmt.Errorf("record: %s: %w", m.Topic, s.err)
	}
	v, _, err := s.reg.Decode(s.m, m.Data)
	if err != nil {
		return nil, fmt.Errorf("record: %s message %d: %w", m.Topic, m.Sequence, err)
	}
	return json.Marshal(v)
}
