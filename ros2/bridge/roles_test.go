package bridge_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
)

var update = flag.Bool("update", false, "rewrite testdata/reference_dds_topics.golden from the bridge")

// referenceGolden holds the DDS topics of the reference robot's bridge,
// one a line: every role's, the root's and the robot-wide ones.
var referenceGolden = filepath.Join("testdata", "reference_dds_topics.golden")

// ddsTopics starts a bridge of robot (nil: none given) on a fake DDS and
// returns the DDS topics it made a writer or reader for.
func ddsTopics(t *testing.T, robot *bringup.Robot) []string {
	t.Helper()
	dds := ddstest.New()
	o := bridge.Options{Bus: mem.New(), Exec: executor.New(nil), DDS: dds}
	if robot != nil {
		o.Roles, o.MotorNodes = bridge.RolesOf(robot), bridge.MotorNodesOf(robot)
	}
	br, err := bridge.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	br.Stop()
	return dds.Topics()
}

// The reference robot's bridge — without a robot type, or with either of
// the reference robot's types — carries every role's topics and
// services, exactly the recorded list.
func TestReferenceRobotBridgeIsUnchanged(t *testing.T) {
	got := strings.Join(ddsTopics(t, nil), "\n") + "\n"
	if *update {
		if err := os.WriteFile(referenceGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(referenceGolden)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, got string) {
		t.Helper()
		if got == string(want) {
			return
		}
		g, w := lineSet(got), lineSet(string(want))
		for n := range w {
			if !g[n] {
				t.Errorf("%s: %s is not bridged", what, n)
			}
		}
		for n := range g {
			if !w[n] {
				t.Errorf("%s: %s is bridged, not in %s", what, n, referenceGolden)
			}
		}
	}
	check("no robot type", got)
	for _, rt := range []string{"saint-T-0L10A2G3H0W", "saint_can-T-0L10A2G3H0W"} {
		robot, err := bringup.Resolve(fixtures.Config(), rt)
		if err != nil {
			t.Fatal(err)
		}
		check(rt, strings.Join(ddsTopics(t, robot), "\n")+"\n")
	}
}

// rosName is the ROS 2 name of a DDS topic: rt/saint/head/state is
// /saint/head/state, rq/saint/nodes/adoptRequest /saint/nodes/adopt.
func rosName(dds string) string {
	n := dds[2:]
	if strings.HasPrefix(dds, "rq") {
		n = strings.TrimSuffix(n, "Request")
	} else if strings.HasPrefix(dds, "rr") {
		n = strings.TrimSuffix(n, "Reply")
	}
	return n
}

// under reports whether a ROS 2 name is one of a role prefix's.
func under(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if name == p || strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// The humanoid's bridge carries none of the reference robot's roles —
// no head, arm, track, console or balance topic or service — but the
// limbs' middleware names, and every robot-wide name of the reference
// robot's bridge: the root middleware's, the nodes', the router's, the
// server's services.
func TestHumanoidBridgesOnlyItsRoles(t *testing.T) {
	robot, err := bringup.Resolve(fixtures.Config(), humanoid)
	if err != nil {
		t.Fatal(err)
	}
	limbs := []string{"/saint/limb/leg_left", "/saint/limb/leg_right", "/saint/limb/arm_left", "/saint/limb/arm_right", "/saint/limb/neck"}
	if got := strings.Join(bridge.RolesOf(robot), " "); got != strings.Join(limbs, " ") {
		t.Errorf("RolesOf(%s) = %s, want its five limbs", humanoid, got)
	}
	reference, err := os.ReadFile(referenceGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	robotWide := 0
	for n := range lineSet(string(reference)) {
		if !under(rosName(n), bridge.DefaultRoles()) {
			want[n] = true
			robotWide++
		}
	}
	for _, p := range limbs {
		for _, n := range []string{"joint_states", "session_status", "control_command"} {
			want["rt"+p+"/"+n] = true
		}
		for _, n := range []string{"get_available_motors", "request_control", "release_control", "reset_zero"} {
			want["rq"+p+"/"+n+"Request"] = true
			want["rr"+p+"/"+n+"Reply"] = true
		}
	}
	if robotWide < 20 {
		t.Fatalf("only %d robot-wide names in %s", robotWide, referenceGolden)
	}
	got := lineSet(strings.Join(ddsTopics(t, robot), "\n"))
	for n := range got {
		if under(rosName(n), bridge.DefaultRoles()) {
			t.Errorf("%s bridged, but the humanoid has no such role", n)
		} else if !want[n] {
			t.Errorf("%s bridged, neither robot-wide nor a limb's", n)
		}
	}
	for n := range want {
		if !got[n] {
			t.Errorf("%s not bridged", n)
		}
	}

	// The relay of saint-sim carries none of them either.
	e := bridge.BusEndpoints(bridge.RolesOf(robot), bridge.MotorNodesOf(robot))
	for _, n := range append(append(e.Out, e.In...), e.Services...) {
		if under(n, bridge.DefaultRoles()) {
			t.Errorf("BusEndpoints of the humanoid has %s", n)
		}
	}
}

// A role the robot declares is bridged whether or not it drives motors
// (the console), and a robot_param.yaml that lists no nodes has the
// reference robot's, as saint-sim runs them.
func TestRolesOf(t *testing.T) {
	if got, want := strings.Join(bridge.RolesOf(nil), " "), "/saint/head /saint/arms/left /saint/arms/right /saint/tracks /saint/console /saint/balance"; got != want {
		t.Errorf("RolesOf(nil) = %s, want %s", got, want)
	}
	robot, err := bringup.Resolve(fixtures.Config(), "saint-T-0L10A2G3H0W")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(bridge.RolesOf(robot), " "), "/saint/head /saint/arms/left /saint/arms/right /saint/tracks /saint/console /saint/balance"; got != want {
		t.Errorf("RolesOf(reference robot) = %s, want %s", got, want)
	}
	noNodes := *robot
	noNodes.Param.Nodes = nil
	noNodes.Param.MotorGroups = append([]bringup.MotorGroup{{Name: "neck", Role: "limb", Instance: "neck", Base: 60}}, robot.Param.MotorGroups...)
	if got, want := strings.Join(bridge.RolesOf(&noNodes), " "), strings.Join(append(bridge.DefaultRoles(), "/saint/limb/neck"), " "); got != want {
		t.Errorf("RolesOf(no nodes) = %s, want %s", got, want)
	}
	oneArm := *robot
	oneArm.Param.Nodes = []bringup.Node{{Role: "arms", Instance: "left"}}
	oneArm.Param.MotorGroups = []bringup.MotorGroup{{Name: "arms_left", Role: "arms", Instance: "left", Base: 10}}
	if got := strings.Join(bridge.RolesOf(&oneArm), " "); got != "/saint/arms/left" {
		t.Errorf("RolesOf(one arm) = %s", got)
	}
	topics := ddsTopics(t, &oneArm)
	for _, n := range topics {
		if under(rosName(n), []string{"/saint/arms/right", "/saint/head", "/saint/tracks"}) {
			t.Errorf("one arm's bridge has %s", n)
		}
	}
	if !lineSet(strings.Join(topics, "\n"))["rt/saint/arms/left/target_pose"] {
		t.Errorf("one arm's bridge lacks its target_pose: %v", topics)
	}
}

func TestRolesRefusesBadPrefixes(t *testing.T) {
	for _, roles := range [][]string{
		{"saint/head"},
		{"/saint/arms/left/"},
		{"/saint/a/b/c"},
		{"/other/head"},
		{"/saint/head", "/saint/head"},
	} {
		_, err := bridge.New(bridge.Options{Bus: mem.New(), Exec: executor.New(nil), DDS: ddstest.New(), Roles: roles})
		if err == nil || !strings.Contains(err.Error(), "Roles[") {
			t.Errorf("Roles %q: err %v, want one naming the entry", roles, err)
		}
	}
	// An empty list bridges no role: the robot-wide names alone.
	dds := ddstest.New()
	br, err := bridge.New(bridge.Options{Bus: mem.New(), Exec: executor.New(nil), DDS: dds, Roles: []string{}, MotorNodes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	br.Stop()
	for _, n := range dds.Topics() {
		if strings.HasPrefix(rosName(n), "/saint/") && !under(rosName(n), []string{"/saint/nodes", "/saint/router", "/saint/rc", "/saint/livelink", "/saint/firmware", "/saint/system"}) {
			t.Errorf("no roles, but %s bridged", n)
		}
	}
}

func lineSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out[l] = true
	}
	return out
}

// A role listed without a motor group of its own is still reached
// through its middleware when its role serves one: a limb among Roles
// only gets its joint_states, control_command and request_control (the
// limb had no names at all when its role topics were a list of their
// own), a console none.
func TestRoleReachedThroughItsMiddleware(t *testing.T) {
	dds := ddstest.New()
	br, err := bridge.New(bridge.Options{Bus: mem.New(), Exec: executor.New(nil), DDS: dds,
		Roles: []string{"/saint/limb/neck", "/saint/console"}, MotorNodes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	br.Stop()
	names := map[string]bool{}
	for _, n := range dds.Topics() {
		names[rosName(n)] = true
	}
	for _, want := range []string{"/saint/limb/neck/joint_states", "/saint/limb/neck/control_command", "/saint/limb/neck/session_status"} {
		if !names[want] {
			t.Errorf("%s not bridged", want)
		}
	}
	for n := range names {
		if strings.HasPrefix(n, "/saint/console/") && strings.Contains(n, "joint_states") {
			t.Errorf("%s bridged: the console has no middleware", n)
		}
	}
}
