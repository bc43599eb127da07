package motor

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseJointsFixture(t *testing.T) {
	data, err := os.ReadFile("../../fixtures/config/joints.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := ParseJoints(data)
	if err != nil {
		t.Fatal(err)
	}
	if j.DOFs != 5 || len(j.JointNames) != 5 || j.JointNames[2] != "elbow" || j.MapIndex[4] != 5 {
		t.Errorf("parsed %+v", j)
	}
	if j.MaxPower <= 0 || j.MaxPowerDuration <= 0 {
		t.Errorf("max_power %g for %g s", j.MaxPower, j.MaxPowerDuration)
	}
	for i := range j.JointNames {
		if q := j.ToURDF(i, j.ToMotor(i, 0.3)); q < 0.3-1e-12 || q > 0.3+1e-12 {
			t.Errorf("joint %d: URDF→motor→URDF gives %g", i, q)
		}
	}
}

func TestJointsDirectionAndOffset(t *testing.T) {
	j, err := ParseJoints([]byte("joint_names: [a, b]\nmap_index: [7, 9]\ndirection: [1, -1]\nlower: [-1, -1]\nupper: [1, 1]\nkp: [1, 1]\nkd: [0, 0]\nurdf_offset: [0.5, 0.25]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.ToURDF(1, 0.1); got != -0.1+0.25 {
		t.Errorf("ToURDF(b, 0.1) = %g, want 0.15", got)
	}
	if got := j.ToMotor(0, 0.5); got != 0 {
		t.Errorf("ToMotor(a, 0.5) = %g, want 0 (the offset)", got)
	}
	if got := j.Clamp(0, 3); got != 1 {
		t.Errorf("Clamp(a, 3) = %g, want 1", got)
	}
	if j.Index(9) != 1 || j.Index(8) != -1 {
		t.Error("Index")
	}
}

// Every error names the line and the field at fault.
func TestParseJointsErrorsNameLineAndField(t *testing.T) {
	const good = `name: arm
dofs: 2
max_power: 10
max_power_duration: 1
joint_names: [a, b]
map_index: [1, 2]
direction: [1, -1]
lower: [-1, -1]
upper: [1, 1]
kp: [1, 2]
kd: [0.1, 0.2]
urdf_offset: [0, 0]
`
	if _, err := ParseJoints([]byte(good)); err != nil {
		t.Fatalf("good table: %v", err)
	}
	for _, tc := range []struct {
		name, from, to string
		line           int
		field          string
	}{
		{"short kp", "kp: [1, 2]", "kp: [1]", 10, "kp"},
		{"bad direction", "direction: [1, -1]", "direction: [1,\n  2]", 8, "direction[1]"},
		{"duplicate motor", "map_index: [1, 2]", "map_index: [1, 1]", 6, "map_index[1]"},
		{"inverted limits", "upper: [1, 1]", "upper: [1, -2]", 9, "upper[1]"},
		{"not a number", "kd: [0.1, 0.2]", "kd: [0.1, fast]", 11, "kd[1]"},
		{"dofs mismatch", "dofs: 2", "dofs: 3", 2, "dofs"},
		{"unknown field", "name: arm", "name: arm\nspeed: 3", 2, "speed"},
		{"missing joint_names", "joint_names: [a, b]\n", "", 1, "joint_names"},
		{"negative kp", "kp: [1, 2]", "kp: [1, -2]", 10, "kp[1]"},
		{"power without duration", "max_power_duration: 1\n", "", 3, "max_power_duration"},
		{"repeated name", "joint_names: [a, b]", "joint_names: [a, a]", 5, "joint_names[1]"},
		{"list expected", "lower: [-1, -1]", "lower: -1", 8, "lower"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseJoints([]byte(strings.Replace(good, tc.from, tc.to, 1)))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ParseError", err)
			}
			if pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("error %q: line %d field %q, want line %d field %q", err, pe.Line, pe.Field, tc.line, tc.field)
			}
			if !strings.HasPrefix(err.Error(), "joints.yaml:") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("message %q does not name the file and field", err)
			}
		})
	}
	if _, err := ParseJoints([]byte("joint_names: [a\n")); err == nil || !strings.Contains(err.Error(), "line") {
		t.Errorf("syntax error %v does not name its line", err)
	}
}

// The arms' role configurations carry the joint table the node gets at
// adoption; it must be joints.yaml's.
func TestArmsConfigsCarryJointsYAML(t *testing.T) {
	data, err := os.ReadFile("../../fixtures/config/joints.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseJoints(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"arms_left.yaml", "arms_right.yaml"} {
		data, err := os.ReadFile("../../fixtures/config/roles/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Motor yaml.Node `yaml:"motor"`
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		got, err := JointsFromNode(&cfg.Motor)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: motor section %+v differs from joints.yaml %+v", name, got, want)
		}
	}
}
