package router

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

func ptr(v float64) *float64 { return &v }

func TestMapApply(t *testing.T) {
	for _, c := range []struct {
		name string
		m    Map
		in   float64
		want float64
	}{
		{"identity", Map{}, 0.3, 0.3},
		{"scale", Map{Scale: ptr(180)}, 0.5, 90},
		{"negative scale", Map{Scale: ptr(-0.1)}, 1, -0.1},
		{"offset after scale", Map{Scale: ptr(2), Offset: 1}, 3, 7},
		{"clamp high", Map{Clamp: []float64{-45, 45}}, 60, 45},
		{"clamp low", Map{Clamp: []float64{-45, 45}}, -60, -45},
		{"clamp inside", Map{Clamp: []float64{-45, 45}}, 10, 10},
		{"clamp after scale and offset", Map{Scale: ptr(10), Offset: 5, Clamp: []float64{0, 50}}, 10, 50},
		{"inside deadzone", Map{Deadzone: 0.05}, 0.04, 0},
		{"inside deadzone negative", Map{Deadzone: 0.05}, -0.049, 0},
		{"outside deadzone", Map{Deadzone: 0.05}, 0.06, 0.06},
		{"deadzone before scale", Map{Deadzone: 0.05, Scale: ptr(90)}, 0.04, 0},
		{"linear curve", Map{Curve: CurveLinear, Expo: 0.3}, 0.5, 0.5},
		{"expo half", Map{Curve: CurveExponential, Expo: 0.3}, 0.5, 0.7*0.5 + 0.3*0.125},
		{"expo full travel", Map{Curve: CurveExponential, Expo: 0.3}, -1, -1},
		{"expo cubic", Map{Curve: CurveExponential, Expo: 1}, 0.5, 0.125},
		{"expo zero is linear", Map{Curve: CurveExponential}, 0.5, 0.5},
		{"analog inverted", Map{Inverted: true}, 0.7, -0.7},
		{"analog inverted then scale", Map{Inverted: true, Scale: ptr(2)}, 0.5, -1},
		{"switch on", Map{Mode: ModeSwitch}, 0.6, 1},
		{"switch at threshold", Map{Mode: ModeSwitch}, 0.5, 1},
		{"switch off", Map{Mode: ModeSwitch}, 0.4, 0},
		{"switch custom threshold", Map{Mode: ModeSwitch, Threshold: ptr(-0.5)}, -0.4, 1},
		{"switch inverted low is on", Map{Mode: ModeSwitch, Inverted: true}, 0, 1},
		{"switch inverted high is off", Map{Mode: ModeSwitch, Inverted: true}, 1, 0},
		{"switch scaled", Map{Mode: ModeSwitch, Scale: ptr(0.8), Offset: 0.1}, 1, 0.9},
		{"switch ignores deadzone and curve", Map{Mode: ModeSwitch, Deadzone: 2, Curve: CurveExponential, Expo: 1}, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.Apply(c.in); math.Abs(got-c.want) > 1e-12 {
				t.Fatalf("Apply(%v) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func TestMappingsToOnePropertyAdd(t *testing.T) {
	list := []Map{
		{From: "headYaw", To: "pan"},
		{From: "eyeLookInLeft", To: "pan", Scale: ptr(-0.05)},
		{From: "eyeLookOutLeft", To: "pan", Scale: ptr(0.05)},
		{From: "jawOpen", To: "jaw"},
	}
	got := mapValues(list, map[string]float64{"headYaw": 10, "eyeLookInLeft": 1, "eyeLookOutLeft": 0.2})
	if math.Abs(got["pan"]-(10-0.05+0.01)) > 1e-12 {
		t.Fatalf("pan %v, want the sum of its mappings", got["pan"])
	}
	if _, ok := got["jaw"]; ok {
		t.Fatal("jaw set without its input")
	}
}

// The API's documented set_route example, verbatim.
const docSetRoute = `{
  "type": "router",
  "action": "set_route",
  "params": {
    "route": {
      "id": "my_custom_route",
      "enabled": true,
      "priority": 150,
      "input": {
        "source": "livelink",
        "subject": "MyCharacter",
        "type": "animation"
      },
      "output": {
        "target": "head"
      },
      "mapping": [
        {"from": "Head", "to": "pan", "scale": 1.0}
      ]
    }
  }
}`

func TestDocumentedRouteJSON(t *testing.T) {
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(docSetRoute), &req); err != nil {
		t.Fatal(err)
	}
	rt, err := decodeRoute(req.Params)
	if err != nil {
		t.Fatal(err)
	}
	if rt.ID != "my_custom_route" || rt.Priority != 150 || rt.Input.Subject != "MyCharacter" || len(rt.Mapping.List) != 1 ||
		*rt.Mapping.List[0].Scale != 1 {
		t.Fatalf("decoded %+v", rt)
	}
	// And back: passthrough is the string, lists are lists.
	b, _ := json.Marshal(Route{ID: "x", Input: RouteInput{Source: "websocket"}, Output: RouteOutput{Target: "*"}, Mapping: Mapping{Passthrough: true}})
	if !strings.Contains(string(b), `"mapping":"passthrough"`) {
		t.Fatalf("passthrough encoded as %s", b)
	}
}

func TestRouteErrorsNameTheField(t *testing.T) {
	good := func() Route {
		return Route{ID: "r", Enabled: true, Priority: 100, Input: RouteInput{Source: "rc"}, Output: RouteOutput{Target: "tracks"},
			Mapping: Mapping{List: []Map{{From: "channel_2", To: "linear"}}}}
	}
	if err := func() *Route { r := good(); return &r }().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		edit  func(*Route)
	}{
		{"id", func(r *Route) { r.ID = "" }},
		{"id", func(r *Route) { r.ID = "has space" }},
		{"priority", func(r *Route) { r.Priority = 1001 }},
		{"input.source", func(r *Route) { r.Input.Source = "telepathy" }},
		{"input.type", func(r *Route) { r.Input.Type = "body" }},
		{"input.protocol", func(r *Route) { r.Input.Protocol = "dsm" }},
		{"input.command_types[0]", func(r *Route) { r.Input.CommandTypes = []string{"dance"} }},
		{"output.target", func(r *Route) { r.Output.Target = "legs" }},
		{"output.target", func(r *Route) { r.Output.Target = "*" }},
		{"mapping", func(r *Route) { r.Mapping.List = nil }},
		{"mapping[0].from", func(r *Route) { r.Mapping.List[0].From = "" }},
		{"mapping[0].to", func(r *Route) { r.Mapping.List[0].To = "pan" }},
		{"mapping[0].clamp", func(r *Route) { r.Mapping.List[0].Clamp = []float64{1} }},
		{"mapping[0].clamp", func(r *Route) { r.Mapping.List[0].Clamp = []float64{1, -1} }},
		{"mapping[0].deadzone", func(r *Route) { r.Mapping.List[0].Deadzone = -1 }},
		{"mapping[0].curve", func(r *Route) { r.Mapping.List[0].Curve = "cubic" }},
		{"mapping[0].expo", func(r *Route) { r.Mapping.List[0].Expo = 2 }},
		{"mapping[0].mode", func(r *Route) { r.Mapping.List[0].Mode = "toggle" }},
		{"mapping[0].threshold", func(r *Route) { r.Mapping.List[0].Threshold = ptr(0.3) }},
		{"mapping[0].scale", func(r *Route) { r.Mapping.List[0].Scale = ptr(math.Inf(1)) }},
	} {
		r := good()
		c.edit(&r)
		err := r.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: got %v, want an error naming %s", c.field, err, c.field)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ yaml, field string }{
		{"routes:\n  - {id: a, input: {source: rc}, output: {target: tracks}, mapping: [{from: c, to: linear}]}\n  - {id: a, input: {source: rc}, output: {target: tracks}, mapping: [{from: c, to: angular}]}\n", "routes[1].id"},
		{"blending: {mode: mix, blend_time_ms: 1, source_timeout_ms: 1}\nroutes: []\n", "blending.mode"},
		{"blending: {mode: blend, blend_time_ms: 1, source_timeout_ms: 0}\nroutes: []\n", "blending.source_timeout_ms"},
		{"routes:\n  - {id: a, input: {source: websocket}, output: {target: head}, mapping: through}\n", "mapping"},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%q: %v, want an error naming %s", c.yaml, err, c.field)
		}
	}
	for _, c := range []struct{ yaml, field string }{
		{"routes: []\nrutes: []\n", "rutes"},
		{"routes:\n  - {id: a, input: {source: rc}, output: {target: tracks}, mapping: [{from: c, to: linear, scal: 2}]}\n", "mapping[0].scal"},
		{"blending: {mode: blend, blend_ms: 3}\nroutes: []\n", "blend_ms"},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		var fe *FieldError
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("unknown key %s: %v", c.field, err)
		} else if strings.Contains(c.field, "scal") && (!errors.As(err, &fe) || !strings.Contains(fe.Message, "line 2")) {
			t.Errorf("unknown mapping option: %v, want the line", err)
		}
	}
	// Blending options not given take their defaults.
	cfg, err := ParseConfig([]byte("blending: {mode: blend}\nroutes: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Blending{Mode: BlendBlend, BlendTimeMS: 200, SourceTimeoutMS: 500}); *cfg.Blending != want {
		t.Fatalf("partial blending %+v, want %+v", *cfg.Blending, want)
	}
}

func TestLiveLinkTransformGivesAngles(t *testing.T) {
	// 30° about z, then 20° about y: q = qz(30)·qy(20).
	half := func(deg float64) (float64, float64) {
		r := deg * math.Pi / 360
		return math.Sin(r), math.Cos(r)
	}
	sz, cz := half(30)
	sy, cy := half(20)
	q := msg.Quaternion{X: -sz * sy, Y: cz * sy, Z: sz * cy, W: cz * cy}
	in := LiveLinkInput(msg.LiveLinkFrame{SubjectName: "Tracker", SubjectType: msg.SubjectTransform,
		Transform: msg.Transform{Translation: msg.Vector3{X: 1, Y: 2, Z: 3}, Rotation: q}})
	for k, want := range map[string]float64{"yaw": 30, "pitch": 20, "roll": 0, "x": 1, "y": 2, "z": 3,
		"qw": q.W, "qx": q.X, "qy": q.Y, "qz": q.Z} {
		if math.Abs(in.Values[k]-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, in.Values[k], want)
		}
	}
	face := LiveLinkInput(msg.LiveLinkFrame{SubjectType: msg.SubjectFace, PropertyNames: []string{"jawOpen"}, PropertyValues: []float32{0.5}})
	if _, ok := face.Values["yaw"]; ok || face.Values["jawOpen"] != 0.5 {
		t.Errorf("face frame values %v", face.Values)
	}
}

func TestDefaultPriorities(t *testing.T) {
	want := map[string]int{"safety": 1000, "rc": 300, "joystick": 250, "websocket": 200, "livelink": 100, "autonomous": 50, "console": 0}
	for src, p := range want {
		if got := DefaultPriority(src); got != p {
			t.Errorf("DefaultPriority(%s) = %d, want %d", src, got, p)
		}
	}
	r := Route{Input: RouteInput{Source: "livelink"}}
	if r.EffectivePriority() != 100 {
		t.Errorf("priority 0 takes the source's: %d", r.EffectivePriority())
	}
	r.Priority = 150
	if r.EffectivePriority() != 150 {
		t.Errorf("a route's priority overrides the source's: %d", r.EffectivePriority())
	}
}
