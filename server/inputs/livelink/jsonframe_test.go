package livelink

import (
	"errors"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

func TestDecodeJSONFrameKinds(t *testing.T) {
	aliases := arkitAliases()
	face, err := DecodeJSONFrame([]byte(`{"v":1,"subject":"FaceCapture","type":"face","frame":42,"names":["jawOpen","HeadYaw"],"values":[0.25,-0.5]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := face.LiveLinkFrame(7, aliases)
	if f.SubjectName != "FaceCapture" || f.SubjectType != msg.SubjectFace || f.FrameNumber != 42 || f.Timestamp != 7 {
		t.Fatalf("face frame %+v", f)
	}
	for n, want := range map[string]float32{"jawOpen": 0.25, "JawOpen": 0.25, "HeadYaw": -0.5, "headYaw": -0.5} {
		if v, ok := f.Property(n); !ok || v != want {
			t.Errorf("face %s = %v (%v), want %v", n, v, ok, want)
		}
	}

	anim, err := DecodeJSONFrame([]byte(`{"v":1,"subject":"UE_Character","type":"animation","properties":{"shoulder_pitch":30,"elbow":-12.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := anim.LiveLinkFrame(1, aliases)
	if strings.Join(a.PropertyNames, ",") != "elbow,shoulder_pitch" || a.PropertyValues[0] != -12.5 || a.PropertyValues[1] != 30 {
		t.Errorf("animation frame %v %v, want properties sorted by name", a.PropertyNames, a.PropertyValues)
	}

	cam, err := DecodeJSONFrame([]byte(`{"v":1,"subject":"VirtualCam","type":"camera","transform":{"translation":[1,2,3],"rotation":[0,0,0.7071068,0.7071068]},"fov":60}`))
	if err != nil {
		t.Fatal(err)
	}
	c := cam.LiveLinkFrame(1, aliases)
	if c.Transform.Translation != (msg.Vector3{X: 1, Y: 2, Z: 3}) || c.Transform.Rotation.Z != 0.7071068 {
		t.Errorf("camera transform %+v", c.Transform)
	}
	if v, ok := c.Property("fov"); !ok || v != 60 {
		t.Errorf("camera fov %v %v", v, ok)
	}

	tr, err := DecodeJSONFrame([]byte(`{"v":1,"subject":"VR_Controller_L","type":"transform","transform":{"translation":[0,0,1.5],"rotation":[0,0,0,1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if x := tr.LiveLinkFrame(1, aliases); x.Transform.Translation.Z != 1.5 || x.Transform.Rotation.W != 1 || len(x.PropertyNames) != 0 {
		t.Errorf("transform frame %+v", x)
	}
}

func TestDecodeJSONFrameRejects(t *testing.T) {
	long := strings.Repeat("a", MaxNameLength+1)
	for _, tc := range []struct{ line, field string }{
		{`not json`, "frame"},
		{`{"v":2,"subject":"S","type":"face"}`, "v"},
		{`{"v":1,"type":"face"}`, "subject"},
		{`{"v":1,"subject":"` + long + `","type":"face"}`, "subject"},
		{`{"v":1,"subject":"S","type":"skeleton"}`, "type"},
		{`{"v":1,"subject":"S","type":"face","names":["a"],"values":[]}`, "values"},
		{`{"v":1,"subject":"S","type":"face","names":["a","a"],"values":[1,2]}`, "names[1]"},
		{`{"v":1,"subject":"S","type":"face","names":[""],"values":[1]}`, "names[0]"},
		{`{"v":1,"subject":"S","type":"face","names":["a"],"values":[1e300]}`, "values[0]"},
		{`{"v":1,"subject":"S","type":"face","names":["a"],"values":[1],"properties":{"b":1}}`, "properties"},
		{`{"v":1,"subject":"S","type":"face","names":["a"],"values":["x"]}`, "values"},
		{`{"v":1,"subject":"S","type":"transform"}`, "transform"},
		{`{"v":1,"subject":"S","type":"face","transform":{"translation":[0,0,0],"rotation":[0,0,0,1]}}`, "transform"},
		{`{"v":1,"subject":"S","type":"transform","transform":{"translation":[0,0,0],"rotation":[0,0,0,2]}}`, "transform.rotation"},
		{`{"v":1,"subject":"S","type":"camera","transform":{"translation":[0,0,0],"rotation":[0,0,0,1]},"fov":0}`, "fov"},
		{`{"v":1,"subject":"S","type":"face","fov":30}`, "fov"},
		{`{"v":1,"subject":"S","type":"face","colour":"red"}`, "colour"},
		{`{"v":1,"subject":"S","type":"face"} {"v":1}`, "frame"},
		{`{"v":1,"subject":"S","type":"face","names":["` + long + `"],"values":[1]}`, "names[0]"},
		{`{"v":1,"subject":"S","type":"face","pad":"` + strings.Repeat("x", MaxJSONFrame) + `"}`, "frame"},
	} {
		_, err := DecodeJSONFrame([]byte(tc.line))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			l := tc.line
			if len(l) > 80 {
				l = l[:80]
			}
			t.Errorf("%s: %v, want an error naming %q", l, err, tc.field)
		}
	}
}

func TestDecodeBeacon(t *testing.T) {
	b, err := DecodeBeacon([]byte(`{"saint_livelink":1,"kind":"discover","name":"UE_Editor"}`))
	if err != nil || b.Kind != BeaconDiscover || b.Name != "UE_Editor" {
		t.Fatalf("%+v %v", b, err)
	}
	for _, bad := range []string{`{}`, `{"saint_livelink":1,"kind":"hello"}`, `[1]`, `{"saint_livelink":2,"kind":"discover"}`} {
		if _, err := DecodeBeacon([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
