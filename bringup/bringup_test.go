package bringup

import (
	"flag"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/roles/motor"
)

func TestRobotType(t *testing.T) {
	p, err := ParseRobotType("pi_plus-S-12L8A0G2H0W")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Params{ModelType: "pi_plus", LegType: "S", Leg: 12, Arm: 8, Claw: 0, Head: 2, Waist: 0}); p != want {
		t.Errorf("parsed %+v, want %+v", p, want)
	}
	if got := p.RobotType(); got != "pi_plus-S-12L8A0G2H0W" {
		t.Errorf("RobotType() = %q", got)
	}
	for _, bad := range []string{"pi_plus", "pi_plus-S-12L8A0G2H", "PI-S-1L1A1G1H1W", "pi_plus-S-xL8A0G2H0W"} {
		if _, err := ParseRobotType(bad); err == nil || !strings.Contains(err.Error(), "expected MODEL-LEGTYPE") {
			t.Errorf("ParseRobotType(%q) = %v", bad, err)
		}
	}
}

func TestResolveFixtures(t *testing.T) {
	r, err := Resolve(fixtures.Config(), "saint-T-0L10A2G3H0W")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Param.MotorGroups) != 5 || r.Joints.DOFs != 13 || len(r.Actions) != 2 || r.SimProfile("arms_left") != "arms" {
		t.Errorf("resolved %+v", r)
	}
	c, err := Resolve(fixtures.Config(), "saint_can-T-0L10A2G3H0W")
	if err != nil {
		t.Fatal(err)
	}
	if c.SimProfile("arms_right") != "arms_can" || !strings.Contains(string(c.RoleConfigData["arms_left"]), "actuators:") {
		t.Errorf("the CAN arms robot: %+v", c.Param)
	}
	if g := r.GroupOf(23); g == nil || g.Name != "arms_right" {
		t.Errorf("GroupOf(23) = %+v", g)
	}
	if a, ok := r.Action("wave_left"); !ok || len(a.Keyframes) != 5 {
		t.Errorf("wave_left: %+v", a)
	}
}

func TestResolveErrors(t *testing.T) {
	good := fstest.MapFS{}
	for _, f := range []string{RobotParamFile, JointsFile, CustomActionFile} {
		data, err := fixturesFile("saint-T-0L10A2G3H0W/" + f)
		if err != nil {
			t.Fatal(err)
		}
		good[Dir+"/a-T-0L10A2G3H0W/"+f] = &fstest.MapFile{Data: data}
	}
	good[Dir+"/b-S-12L8A0G2H0W/"+RobotParamFile] = &fstest.MapFile{Data: []byte("robot_id: \"\"\n")}
	for _, tc := range []struct {
		robotType string
		fsys      fstest.MapFS
		want      string
	}{
		{"", good, "robot_type: missing (available: a-T-0L10A2G3H0W, b-S-12L8A0G2H0W)"},
		{"pi_plus", good, `robot_type "pi_plus": expected MODEL-LEGTYPE`},
		{"c-S-1L1A1G1H1W", good, `no robot_config/c-S-1L1A1G1H1W/ (available: a-T-0L10A2G3H0W, b-S-12L8A0G2H0W)`},
		{"b-S-12L8A0G2H0W", good, "b-S-12L8A0G2H0W/joints.yaml"},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+RobotParamFile, "motor_groups: [{name: a, role: arms, base: 10}, {name: b, role: arms, base: 20}]\nrole_configs: {arms_left: nowhere.yaml}\n"), "role_configs.arms_left: open nowhere.yaml"},
		{"x-S-1L1A1G1H1W", fstest.MapFS{}, "available: none in robot_config/"},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+RobotParamFile, "robot_idd: 1\n"), "field robot_idd not found"},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+RobotParamFile, "motor_groups: [{name: a, role: arms, base: 20}]\n"), "map_index[0]: motor 11 (left_shoulder_pan) is in no motor group"},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+CustomActionFile, "actions: [{name: w, joints: [nose], keyframes: [{time: 1, positions: [0]}]}]\n"), `actions[0] (w): joints[0]: "nose" is not a joint`},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+CustomActionFile, "actions: [{name: w, joints: [left_elbow], keyframes: [{time: 0, positions: [0]}]}]\n"), "keyframes[0].time: 0, expected after 0 s"},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+CustomActionFile, "actions: [{name: w, joints: [left_elbow], keyframes: [{time: 1, positions: [3]}]}]\n"), "keyframes[0].positions[0]: 3 rad, outside left_elbow's limits [-2.5, 2.5]"},
		{"a-T-0L10A2G3H0W", with(good, "a-T-0L10A2G3H0W/"+CustomActionFile, "actions: [{name: w, joints: [left_elbow], keyframes: [{time: 1, positions: [0, 1]}]}]\n"), "positions: 2 values, expected 1"},
	} {
		_, err := Resolve(tc.fsys, tc.robotType)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q) = %v, want %q", tc.robotType, err, tc.want)
		}
	}
}

// with returns a copy of fsys with robot_config/name holding data.
func with(fsys fstest.MapFS, name, data string) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range fsys {
		out[k] = v
	}
	out[Dir+"/"+name] = &fstest.MapFile{Data: []byte(data)}
	return out
}

func fixturesFile(name string) ([]byte, error) {
	return fs.ReadFile(fixtures.Config(), Dir+"/"+name)
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		err  string
	}{
		{nil, "", ""},
		{[]string{"--robot-type", "pi_plus-S-12L8A0G2H0W"}, "pi_plus-S-12L8A0G2H0W", ""},
		{[]string{"--model-type", "pi_plus", "--leg-type", "S", "--leg", "12", "--arm", "8", "--head", "2"}, "pi_plus-S-12L8A0G2H0W", ""},
		{[]string{"--robot-type", "x-S-1L1A1G1H1W", "--arm", "8"}, "", "not both"},
		{[]string{"--arm", "8"}, "", "need --model-type and --leg-type"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		get := RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := get()
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %q, %v; want %q, %q", tc.args, got, err, tc.want, tc.err)
		}
	}
}

// The reference robot's joints.yaml is the arms' own tables with
// robot-wide names and ids: the same limits, gains and directions as the
// arms_left and arms_right role configurations carry.
func TestReferenceJointsMatchTheArms(t *testing.T) {
	for _, rt := range Available(fixtures.Config()) {
		t.Run(rt, func(t *testing.T) { testJointsMatchTheArms(t, rt) })
	}
}

func testJointsMatchTheArms(t *testing.T, robotType string) {
	r, err := Resolve(fixtures.Config(), robotType)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range r.Param.MotorGroups {
		key := msg.RoleKey(g.Role, g.Instance)
		data, ok := r.RoleConfigData[key]
		if !ok {
			if data, err = fs.ReadFile(fixtures.Config(), "roles/"+key+".yaml"); err != nil {
				t.Fatal(err)
			}
		}
		var cfg struct {
			Motor yaml.Node `yaml:"motor"`
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Motor.Kind == 0 {
			continue // the head: its table is made from its limits
		}
		node, err := motor.JointsFromNode(&cfg.Motor)
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range node.JointNames {
			k := slices.Index(r.Joints.JointNames, g.JointPrefix+name)
			if k < 0 {
				t.Errorf("%s: %s missing from joints.yaml", g.Name, g.JointPrefix+name)
				continue
			}
			j := r.Joints
			if j.MapIndex[k] != g.Base+node.MapIndex[i] || j.Lower[k] != node.Lower[i] || j.Upper[k] != node.Upper[i] ||
				j.Kp[k] != node.Kp[i] || j.Kd[k] != node.Kd[i] || j.Direction[k] != node.Direction[i] || j.URDFOffset[k] != node.URDFOffset[i] {
				t.Errorf("%s: %s differs between joints.yaml and the role configuration", g.Name, name)
			}
		}
	}
}
