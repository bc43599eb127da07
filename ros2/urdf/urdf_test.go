package urdf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/kinematics"
)

func TestGeneratedFilesAreFresh(t *testing.T) {
	for _, r := range Robots() {
		if err := r.Check(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(r.File())
		if err != nil {
			t.Fatalf("%v (go generate ./ros2/urdf)", err)
		}
		if !bytes.Equal(got, r.Marshal()) {
			t.Errorf("%s is stale: run go generate ./ros2/urdf", r.File())
		}
	}
}

// TestCheckURDF runs urdfdom's own parser (Debian liburdfdom-tools) on
// each committed model: it must parse, with base_link as its root and
// every link in the tree.
func TestCheckURDF(t *testing.T) {
	if _, err := exec.LookPath("check_urdf"); err != nil {
		t.Skip("check_urdf not installed (make ros2-deps, or apt-get install liburdfdom-tools)")
	}
	for _, r := range Robots() {
		out, err := exec.Command("check_urdf", r.File()).CombinedOutput()
		if err != nil {
			t.Fatalf("check_urdf %s: %v\n%s", r.File(), err, out)
		}
		s := string(out)
		if !strings.Contains(s, "Successfully Parsed XML") || !strings.Contains(s, "root Link: base_link has") {
			t.Fatalf("check_urdf %s:\n%s", r.File(), s)
		}
		for _, l := range r.Links {
			if l.Name != r.Root && !regexp.MustCompile(`child\(\d+\):\s+`+regexp.QuoteMeta(l.Name)+`\n`).MatchString(s) {
				t.Errorf("check_urdf %s does not list link %s:\n%s", r.File(), l.Name, s)
			}
		}
	}
}

// TestJointNamesAreTheRobotConfigs: the moving joints of each model are
// the robot-wide joint names of its robot configuration's joints.yaml (the
// names /joint_states carries), plus the reference robot's two sprockets.
func TestJointNamesAreTheRobotConfigs(t *testing.T) {
	for _, c := range []struct {
		robot *Robot
		dirs  []string
		extra []string
	}{
		{Reference(), []string{"saint-T-0L10A2G3H0W", "saint_can-T-0L10A2G3H0W"}, []string{"left_track", "right_track"}},
		{Humanoid(), []string{"pi_plus-S-12L8A0G2H0W"}, nil},
	} {
		for _, dir := range c.dirs {
			data, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "config", "robot_config", dir, "joints.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var cfg struct {
				JointNames []string `yaml:"joint_names"`
			}
			if err := yaml.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(cfg.JointNames), c.extra...)
			got := c.robot.MovingJoints()
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: moving joints %v, want %s's %v", c.robot.Name, got, dir, want)
			}
		}
	}
}

// poses are the joint positions the kinematics are compared at: zero, a
// few by hand and random ones within ±π.
func poses(names []string) []map[string]float64 {
	out := []map[string]float64{{}}
	hand := map[string]float64{}
	for i, n := range names {
		hand[n] = 0.3*float64(i%5) - 0.5
	}
	out = append(out, hand)
	rng := rand.New(rand.NewPCG(25, 3))
	for k := 0; k < 20; k++ {
		p := map[string]float64{}
		for _, n := range names {
			p[n] = (rng.Float64()*2 - 1) * math.Pi
		}
		out = append(out, p)
	}
	return out
}

const tolerance = 1e-9 // m, and for unit vectors

func load(t *testing.T, name string) *Robot {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pose(t *testing.T, r *Robot, link string, q map[string]float64) Transform {
	t.Helper()
	p, err := r.LinkPose(link, q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(t *testing.T, what string, got, want mgl64.Vec3) {
	t.Helper()
	if d := got.Sub(want).Len(); d > tolerance || math.IsNaN(d) {
		t.Errorf("%s: URDF %v, kinematics %v (%.3g m apart)", what, got, want, d)
	}
}

// TestReferenceModelIsTheKinematics reads saint.urdf back and puts every
// arm joint, each gripper (position and orientation) and the head where
// the kinematics package does, at many poses.
func TestReferenceModelIsTheKinematics(t *testing.T) {
	r := load(t, "saint.urdf")
	for _, q := range poses(r.MovingJoints()) {
		for _, side := range []string{"left", "right"} {
			arm := kinematics.DefaultArm(side)
			var angles []float64
			for _, n := range kinematics.ArmJointNames() {
				angles = append(angles, q[side+"_"+n])
			}
			chain := arm.Chain(angles)
			for i, n := range kinematics.ArmJointNames() {
				near(t, side+"_"+n, pose(t, r, side+"_"+n+"_link", q).Translation, chain[i])
			}
			tip := arm.Forward(angles)
			g := pose(t, r, side+"_gripper", q)
			near(t, side+" gripper", g.Translation, tip.Position)
			for c, axis := range []mgl64.Vec3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} {
				near(t, side+" gripper axis", g.Rotation.Rotate(axis), tip.Rotation.Col(c))
			}
			near(t, side+" mount", pose(t, r, "arm_"+side+"_base", q).Translation, arm.Mount)
		}
		h := pose(t, r, "head", q)
		near(t, "head", h.Translation, kinematics.HeadMount())
		near(t, "head facing", h.Rotation.Rotate(mgl64.Vec3{1, 0, 0}), kinematics.HeadFacing(q["head_pan"], q["head_tilt"]))
		base := kinematics.DefaultTrackedBase()
		near(t, "left sprocket", pose(t, r, "left_sprocket", q).Translation, mgl64.Vec3{0, base.Gauge / 2, base.SprocketRadius})
	}
}

// TestHumanoidModelIsTheKinematics reads pi_plus.urdf back and puts every
// joint and each limb's tip where kinematics.HumanoidLimb's Chain does,
// and turns each tip as its Facing, at many poses.
func TestHumanoidModelIsTheKinematics(t *testing.T) {
	r := load(t, "pi_plus.urdf")
	for _, q := range poses(r.MovingJoints()) {
		for _, l := range humanoidLimbs {
			limb, err := kinematics.HumanoidLimb(l.instance)
			if err != nil {
				t.Fatal(err)
			}
			var angles []float64
			for _, n := range limb.JointNames() {
				angles = append(angles, q[l.prefix+n])
			}
			chain := limb.Chain(angles)
			for i, n := range limb.JointNames() {
				near(t, l.prefix+n, pose(t, r, l.prefix+n+"_link", q).Translation, chain[i])
			}
			tip := pose(t, r, l.tip, q)
			near(t, l.tip, tip.Translation, chain[len(chain)-1])
			near(t, l.tip+" facing", tip.Rotation.Rotate(mgl64.Vec3{1, 0, 0}), limb.Facing(angles))
		}
	}
}

// TestParseRefusesBrokenModels: the reader names what is wrong.
func TestParseRefusesBrokenModels(t *testing.T) {
	for _, c := range []struct{ name, xml, want string }{
		{"two roots", `<robot name="x"><link name="a"/><link name="b"/></robot>`, "both have no parent"},
		{"bad origin", `<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/><child link="b"/><origin xyz="1 2"/></joint></robot>`, `joint "j": want three numbers`},
		{"bad type", `<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="prismatic"><parent link="a"/><child link="b"/></joint></robot>`, `type "prismatic"`},
		{"unknown link", `<robot name="x"><link name="a"/><joint name="j" type="fixed"><parent link="a"/><child link="c"/></joint></robot>`, "not both links"},
	} {
		_, err := Parse([]byte(c.xml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestParseReadsWhatMarshalWrites: a model written and read back is the
// same model, visuals included.
func TestParseReadsWhatMarshalWrites(t *testing.T) {
	for _, r := range Robots() {
		back, err := Parse(r.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		if back.Name != r.Name || back.Root != r.Root || !slices.EqualFunc(back.Links, r.Links, func(a, b Link) bool {
			return a.Name == b.Name && slices.Equal(a.Visuals, b.Visuals)
		}) || !slices.Equal(back.Joints, r.Joints) {
			t.Errorf("%s read back differs from the model", r.Name)
		}
	}
}

// TestJointLimitsAreTheRobotConfigs: each revolute joint's limits are its
// robot configuration's joints.yaml lower and upper, the limits the motor
// middleware clamps commands to.
func TestJointLimitsAreTheRobotConfigs(t *testing.T) {
	for _, c := range []struct {
		robot *Robot
		typ   string
	}{{Reference(), ReferenceType}, {Humanoid(), HumanoidType}} {
		limits := limitsOf(c.typ)
		for _, j := range c.robot.Joints {
			if j.Type != Revolute {
				continue
			}
			l, ok := limits[j.Name]
			if !ok {
				t.Errorf("%s: joint %s is not in %s's joints.yaml", c.robot.Name, j.Name, c.typ)
				continue
			}
			if j.Lower != l[0] || j.Upper != l[1] || j.Lower >= j.Upper {
				t.Errorf("%s: joint %s limits %g…%g, joints.yaml %g…%g", c.robot.Name, j.Name, j.Lower, j.Upper, l[0], l[1])
			}
		}
	}
}
