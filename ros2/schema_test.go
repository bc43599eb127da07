package ros2

import (
	"reflect"
	"strings"
	"testing"
)

func TestSchemaIsRosbag2sFormat(t *testing.T) {
	reg, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	odom, _ := reg.Message("nav_msgs/Odometry")
	if odom.TypeName() != "nav_msgs/msg/Odometry" {
		t.Errorf("TypeName %q", odom.TypeName())
	}
	s := string(reg.Schema(odom))
	sections := strings.Split(s, "\n"+SchemaSeparator+"\nMSG: ")
	if !strings.HasPrefix(s, "std_msgs/Header header\n") {
		t.Errorf("schema does not start with Odometry.msg:\n%s", s)
	}
	var deps []string
	for _, sec := range sections[1:] {
		name, _, _ := strings.Cut(sec, "\n")
		deps = append(deps, name)
	}
	want := []string{"std_msgs/Header", "geometry_msgs/PoseWithCovariance", "geometry_msgs/TwistWithCovariance",
		"builtin_interfaces/Time", "geometry_msgs/Pose", "geometry_msgs/Twist", "geometry_msgs/Point",
		"geometry_msgs/Quaternion", "geometry_msgs/Vector3"}
	if !reflect.DeepEqual(deps, want) {
		t.Errorf("dependencies %q, want each once, in the order first used: %q", deps, want)
	}
	if len(SchemaSeparator) != 80 || strings.Trim(SchemaSeparator, "=") != "" {
		t.Errorf("separator %q: want 80 '='", SchemaSeparator)
	}
}

// Every message's schema parses back into the same definitions, so a
// recording decodes with the schema it carries.
func TestParseSchemaRoundTrip(t *testing.T) {
	reg, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range reg.Messages() {
		if m.Kind != "msg" {
			continue
		}
		got, top, err := ParseSchema(m.TypeName(), reg.Schema(m))
		if err != nil {
			t.Errorf("%s: %v", m.FullName(), err)
			continue
		}
		if top.FullName() != m.FullName() || !reflect.DeepEqual(top.Fields, m.Fields) {
			t.Errorf("%s parsed back as %s %+v", m.FullName(), top.FullName(), top.Fields)
		}
		for _, dep := range got.Messages() {
			orig, _ := reg.Message(dep.FullName())
			if orig == nil || !reflect.DeepEqual(dep.Fields, orig.Fields) {
				t.Errorf("%s: dependency %s parsed back as %+v", m.FullName(), dep.FullName(), dep.Fields)
			}
		}
	}
}

func TestParseSchemaErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"Odometry", "float64 x\n", "want pkg/msg/Name"},
		{"a/msg/B", "float64 x\n" + SchemaSeparator + "\nfloat64 y\n", `want "MSG: pkg/Name"`},
		{"a/msg/B", "c/D d\n", "message c/D is not defined"},
		{"a/msg/B", "float64\n", "line 1"},
	} {
		_, _, err := ParseSchema(c.name, []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSchema(%q, %q): %v, want an error with %q", c.name, c.data, err, c.want)
		}
	}
}
