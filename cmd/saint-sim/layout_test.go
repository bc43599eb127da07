package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/record"
)

// checkLayout checks docs/foxglove/saint.json against a recording of the
// adopted robot: every topic its panels show is in the recording, and every
// plotted message path leads to a number in that topic's messages. The
// image panel shows the head camera, which streams only on demand (the
// Foxglove server starts it when the panel subscribes), so it is not in a
// plain run's recording.
func checkLayout(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/foxglove/saint.json")
	if err != nil {
		t.Fatal(err)
	}
	var layout struct {
		ConfigByID map[string]struct {
			Paths []struct {
				Value string `json:"value"`
			} `json:"paths"`
			TopicPath   string          `json:"topicPath"`
			CameraTopic string          `json:"cameraTopic"`
			Topics      map[string]any  `json:"topics"`
			Layout      json.RawMessage `json:"layout"`
		} `json:"configById"`
		Layout json.RawMessage `json:"layout"`
	}
	if err := json.Unmarshal(b, &layout); err != nil {
		t.Fatalf("saint.json: %v", err)
	}
	want := map[string][]string{} // topic → field paths
	images := 0
	for id, cfg := range layout.ConfigByID {
		if !strings.Contains(string(layout.Layout), `"`+id+`"`) {
			t.Errorf("saint.json: panel %s is not placed in the layout", id)
		}
		for _, p := range cfg.Paths {
			topic, field, _ := strings.Cut(p.Value, ".")
			want[topic] = append(want[topic], field)
		}
		if strings.HasPrefix(id, "ImageViewPanel!") {
			images++
		}
		if strings.HasPrefix(id, "ImageViewPanel!") && cfg.CameraTopic != msg.TopicHeadCameraImageRaw {
			t.Errorf("saint.json: image panel %s shows %q, want the head camera %s", id, cfg.CameraTopic, msg.TopicHeadCameraImageRaw)
		}
		if cfg.TopicPath != "" {
			want[cfg.TopicPath] = append(want[cfg.TopicPath], "")
		}
		for topic := range cfg.Topics {
			want[topic] = append(want[topic], "")
		}
	}
	if images == 0 {
		t.Error("saint.json has no image panel on the head camera")
	}
	last := map[string]any{}
	dec := record.NewDecoder()
	if _, err := record.Read(file, func(m record.Message) error {
		if _, ok := want[m.Topic]; ok {
			// CDR channels decode to the fields of their ROS 2 type, the
			// names Foxglove's message paths use.
			data, err := dec.JSON(m)
			if err != nil {
				return err
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				return err
			}
			last[m.Topic] = v
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for topic, fields := range want {
		v, ok := last[topic]
		if !ok {
			t.Errorf("saint.json shows %s, which the robot does not publish", topic)
			continue
		}
		for _, f := range fields {
			if f == "" {
				continue
			}
			if x, ok := walk(v, f); !ok {
				t.Errorf("saint.json plots %s.%s: no such field (message %v)", topic, f, v)
			} else if _, isNum := x.(float64); !isNum {
				t.Errorf("saint.json plots %s.%s: %v is not a number", topic, f, x)
			}
		}
	}
}

var pathPart = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$`)

// walk follows a Foxglove message path ("a.b[0]") into a decoded JSON value.
func walk(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		m := pathPart.FindStringSubmatch(part)
		if m == nil {
			return nil, false
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[m[1]]; !ok {
			return nil, false
		}
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			i, _ := strconv.Atoi(idx)
			arr, ok := v.([]any)
			if !ok || i >= len(arr) {
				return nil, false
			}
			v = arr[i]
		}
	}
	return v, true
}
