package record

import "encoding/json"

// TopicTransforms carries the robot's coordinate frames as Foxglove's
// foxglove.FrameTransforms (JSON), so Foxglove's 3D panel places the
// robot: world → odom → base_link from odometry, world →
// truth/base_link from the simulator's ground truth, base_link → head
// from the head's pan, tilt and roll.
const TopicTransforms = "/saint/tf"

// FrameTransforms is foxglove.FrameTransforms: a batch of transforms.
type FrameTransforms struct {
	Transforms []FrameTransform `json:"transforms"`
}

// FrameTransform is foxglove.FrameTransform: where child sits in parent
// (metres) and how it is turned (a unit quaternion).
type FrameTransform struct {
	Timestamp   Timestamp `json:"timestamp"`
	Parent      string    `json:"parent_frame_id"`
	Child       string    `json:"child_frame_id"`
	Translation Vector3   `json:"translation"`
	Rotation    Rotation  `json:"rotation"`
}

// Timestamp is Foxglove's time: whole seconds and nanoseconds.
type Timestamp struct {
	Sec  int64 `json:"sec"`
	Nsec int64 `json:"nsec"`
}

// Vector3 is a translation in metres.
type Vector3 struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Rotation is a unit quaternion.
type Rotation struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
	W float64 `json:"w"`
}

// frameTransformsSchema is the JSON Schema of foxglove.FrameTransforms.
var frameTransformsSchema = func() []byte {
	num := map[string]any{"type": "number"}
	integer := map[string]any{"type": "integer"}
	str := map[string]any{"type": "string"}
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	transform := obj(map[string]any{
		"timestamp":       obj(map[string]any{"sec": integer, "nsec": integer}),
		"parent_frame_id": str,
		"child_frame_id":  str,
		"translation":     obj(map[string]any{"x": num, "y": num, "z": num}),
		"rotation":        obj(map[string]any{"x": num, "y": num, "z": num, "w": num}),
	})
	s := obj(map[string]any{"transforms": map[string]any{"type": "array", "items": transform}})
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "foxglove.FrameTransforms"
	b, _ := json.Marshal(s)
	return b
}()

// Fixed stores JSON payloads with a schema given in advance rather than
// inferred: for topics whose messages follow a published schema.
type Fixed struct {
	Name   string
	Schema []byte
}

// Channel implements Encoding.
func (f Fixed) Channel(string, []byte) (ChannelSpec, error) {
	return ChannelSpec{MessageEncoding: "json", SchemaName: f.Name, SchemaEncoding: "jsonschema", Schema: f.Schema}, nil
}

// DefaultEncoding is the encoding recordings and the Foxglove server use
// when given none: ROS 2's (ROS2: ros2msg schemas, CDR messages) for the
// topics that have a ROS 2 interface type, and JSONEncoding's for the
// rest.
func DefaultEncoding(topic string) Encoding {
	if t, err := defaultTypes(); err == nil {
		return t.Encoding(topic)
	}
	return JSONEncoding(topic)
}

// JSONEncoding stores every topic as JSON: Foxglove's own schema for
// TopicTransforms, an inferred JSON Schema for every other topic.
func JSONEncoding(topic string) Encoding {
	if topic == TopicTransforms {
		return Fixed{Name: "foxglove.FrameTransforms", Schema: frameTransformsSchema}
	}
	return JSON{}
}
