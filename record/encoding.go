package record

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Encoding decides how a topic is stored: the MCAP channel's message
// encoding and schema, and how each bus payload (JSON) becomes the stored
// message. Implementations must be safe for use by one goroutine at a time
// per Recorder (the recorder's writer).
type Encoding interface {
	// Channel describes topic, given its first message.
	Channel(topic string, first []byte) (ChannelSpec, error)
}

// ChannelSpec is how one topic is written: the MCAP channel's
// MessageEncoding ("json", "cdr"), its schema (name, encoding such as
// "jsonschema" or "ros2msg", and data) and Encode, which turns a bus
// payload into the stored bytes (nil keeps the payload as it is).
// EncodeValue, when set, does the same for a message that arrived as a
// value rather than JSON (bus.Msg.Value, in process): it gives what
// Encode gives for the value's JSON, without making that JSON; nil means
// the channel takes JSON only.
type ChannelSpec struct {
	MessageEncoding string
	SchemaName      string
	SchemaEncoding  string
	Schema          []byte
	Encode          func(payload []byte) ([]byte, error)
	EncodeValue     func(v any) ([]byte, error)
}

// JSON stores a topic's JSON payloads unchanged, with a JSON Schema
// inferred from the first message: every field it has, with its JSON type.
// Fields that later messages add are allowed (the schema does not forbid
// additional properties), so the schema describes without rejecting.
type JSON struct{}

var _ Encoding = JSON{}

// Channel implements Encoding.
func (JSON) Channel(topic string, first []byte) (ChannelSpec, error) {
	var v any
	if err := json.Unmarshal(first, &v); err != nil {
		return ChannelSpec{}, fmt.Errorf("record: %s: first message is not JSON: %w", topic, err)
	}
	schema := InferSchema(v)
	schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	schema["title"] = SchemaName(topic)
	data, err := json.Marshal(schema)
	if err != nil {
		return ChannelSpec{}, err
	}
	return ChannelSpec{
		MessageEncoding: "json", SchemaName: SchemaName(topic), SchemaEncoding: "jsonschema", Schema: data,
	}, nil
}

// SchemaName names a topic's inferred schema after the topic:
// "/saint/head/state" is "saint.head.state".
func SchemaName(topic string) string {
	return strings.ReplaceAll(strings.Trim(topic, "/"), "/", ".")
}

// InferSchema returns a JSON Schema (as a map ready to marshal) describing
// the decoded JSON value v: objects list their properties, arrays describe
// their first element, numbers, strings and booleans their type. null
// gives an empty schema, which allows anything.
//
// Foxglove reads these schemas to know a channel's fields, and its reader
// takes only fields of a known type and arrays of numbers, strings,
// booleans or objects: it refuses the whole channel for one field it
// cannot read. So an object's field whose type the first message does not
// show (null, an empty array) or that is an array of arrays is left out of
// its properties; the schema still allows it, and the messages keep it.
func InferSchema(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		props := map[string]any{}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := InferSchema(x[k]); foxgloveReadable(p) {
				props[k] = p
			}
		}
		return map[string]any{"type": "object", "properties": props}
	case []any:
		s := map[string]any{"type": "array"}
		if len(x) > 0 {
			s["items"] = InferSchema(x[0])
		}
		return s
	case float64:
		return map[string]any{"type": "number"}
	case string:
		return map[string]any{"type": "string"}
	case bool:
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{}
}

// foxgloveReadable reports whether Foxglove's JSON Schema reader takes a
// field of schema s: it has a type, and an array's items have one other
// than array.
func foxgloveReadable(s map[string]any) bool {
	switch s["type"] {
	case nil:
		return false
	case "array":
		items, _ := s["items"].(map[string]any)
		return items != nil && items["type"] != nil && items["type"] != "array"
	}
	return true
}
