package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus/mem"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/bridge"
	"github.com/saint-os/saint/ros2/bridge/ddstest"
	"github.com/saint-os/saint/ros2/urdf"
)

func newModelRig(t *testing.T, model *urdf.Robot, roles []string) *rig {
	t.Helper()
	return newModelRigOn(t, model, roles, bridge.WallClock)
}

func newModelRigOn(t *testing.T, model *urdf.Robot, roles []string, mode bridge.ClockMode) *rig {
	t.Helper()
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = ex.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	r := &rig{t: t, ex: ex, bus: mem.New(), dds: ddstest.New(), reg: reg}
	r.br, err = bridge.New(bridge.Options{Bus: r.bus, Exec: ex, DDS: r.dds, Registry: reg, Model: model, Roles: roles, Clock: mode, CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.br.Stop)
	return r
}

// decodeLast decodes the last sample written on topic as typ.
func (r *rig) decodeLast(topic, typ string) map[string]any {
	r.t.Helper()
	w := r.dds.Written(topic)
	if len(w) == 0 {
		r.t.Fatalf("nothing written on %s", topic)
	}
	m, _ := r.reg.Message(typ)
	v, _, err := r.reg.Decode(m, w[len(w)-1])
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

// tfTree is a set of transforms by child frame, as tf2 keeps them.
type tfTree map[string]struct {
	parent string
	t      urdf.Transform
	stamp  map[string]any
}

func f64(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	panic(fmt.Sprintf("not a number: %T", v))
}

func (tree tfTree) add(t *testing.T, tf map[string]any) {
	t.Helper()
	for _, x := range tf["transforms"].([]any) {
		ts := x.(map[string]any)
		h := ts["header"].(map[string]any)
		tr := ts["transform"].(map[string]any)
		p, q := tr["translation"].(map[string]any), tr["rotation"].(map[string]any)
		tree[ts["child_frame_id"].(string)] = struct {
			parent string
			t      urdf.Transform
			stamp  map[string]any
		}{h["frame_id"].(string), urdf.Transform{
			Translation: mgl64.Vec3{f64(p["x"]), f64(p["y"]), f64(p["z"])},
			Rotation:    mgl64.Quat{W: f64(q["w"]), V: mgl64.Vec3{f64(q["x"]), f64(q["y"]), f64(q["z"])}},
		}, h["stamp"].(map[string]any)}
	}
}

// lookup is frame's pose in root by the tree's transforms, as tf2's
// lookupTransform chains them.
func (tree tfTree) lookup(t *testing.T, root, frame string) urdf.Transform {
	t.Helper()
	out := urdf.Transform{Rotation: mgl64.QuatIdent()}
	for n := frame; n != root; {
		e, ok := tree[n]
		if !ok {
			t.Fatalf("no transform to %s (on the way from %s to %s)", n, frame, root)
		}
		out = e.t.Then(out)
		n = e.parent
	}
	return out
}

func nearVec(t *testing.T, what string, got, want mgl64.Vec3) {
	t.Helper()
	if d := got.Sub(want).Len(); d > 1e-9 || math.IsNaN(d) {
		t.Errorf("%s: from /tf %v, kinematics %v (%.3g m apart)", what, got, want, d)
	}
}

// TestModelOnRobotDescriptionAndTF: the bridge publishes the reference
// robot's URDF latched on /robot_description, its fixed links latched on
// /tf_static, and on /tf the transforms of the joints a joint_states
// message names and odom → base_link from the odometry, stamped as they
// are; chained as tf2 chains them, they put the grippers and the head
// where the kinematics do.
func TestModelOnRobotDescriptionAndTF(t *testing.T) {
	r := newModelRig(t, urdf.Reference(), nil)
	desc := r.decodeLast("rt/robot_description", "std_msgs/String")
	if desc["data"] != string(urdf.Reference().Marshal()) {
		t.Fatalf("/robot_description is not saint.urdf")
	}
	for _, topic := range []string{"rt/robot_description", "rt/tf_static"} {
		if q := r.dds.QoS(topic); q != bridge.LatchedQoS {
			t.Errorf("%s QoS %+v, want reliable, transient local, keep last 1", topic, q)
		}
	}
	if q := r.dds.QoS("rt/tf"); !q.Reliable || q.TransientLocal || q.Depth != 100 {
		t.Errorf("/tf QoS %+v, want tf2's reliable, volatile, keep last 100", q)
	}
	tree := tfTree{}
	tree.add(t, r.decodeLast("rt/tf_static", "tf2_msgs/TFMessage"))
	for _, fixed := range []string{"torso", "arm_left_base", "arm_right_base", "left_gripper", "right_gripper", "head"} {
		if _, ok := tree[fixed]; !ok {
			t.Errorf("/tf_static has no %s", fixed)
		}
	}

	stamp := msg.Time{Sec: 1764000000, Nanosec: 250}
	for k, q := range [][]float64{{0, 0, 0, 0, 0}, {0.4, -0.7, 1.1, -0.3, 0.9}, {-2.1, 1.5, -2.4, 2.2, -1.3}} {
		left, right := q, []float64{-q[0], q[2], q[1], q[4], q[3]}
		head := []float64{0.2 * float64(k), -0.4 * float64(k), 0.1}
		var names []string
		var pos []float64
		for i, n := range kinematics.ArmJointNames() {
			names = append(names, "left_"+n, "right_"+n)
			pos = append(pos, left[i], right[i])
		}
		names = append(names, "head_pan", "head_tilt", "head_roll", "left_track")
		pos = append(pos, head[0], head[1], head[2], 3.3)
		before := len(r.dds.Written("rt/tf"))
		if err := r.bus.Publish(msg.RootMotorName(msg.MotorJointStates), msg.JointStates{Header: msg.Header{Stamp: stamp}, Name: names, Position: pos}); err != nil {
			t.Fatal(err)
		}
		checkFor(t, "the joints' transforms on /tf", func() bool { return len(r.dds.Written("rt/tf")) > before })
		tf := r.decodeLast("rt/tf", "tf2_msgs/TFMessage")
		if n := len(tf["transforms"].([]any)); n != len(names) {
			t.Fatalf("/tf has %d transforms, want one per joint (%d)", n, len(names))
		}
		tree.add(t, tf)
		if s := tree["left_elbow_link"].stamp; f64(s["sec"]) != float64(stamp.Sec) || f64(s["nanosec"]) != float64(stamp.Nanosec) {
			t.Errorf("/tf stamp %v, want the joint states' %+v", s, stamp)
		}
		for side, angles := range map[string][]float64{"left": left, "right": right} {
			want := kinematics.DefaultArm(side).Forward(angles)
			got := tree.lookup(t, "base_link", side+"_gripper")
			nearVec(t, side+" gripper", got.Translation, want.Position)
			for c, axis := range []mgl64.Vec3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} {
				nearVec(t, side+" gripper axis", got.Rotation.Rotate(axis), want.Rotation.Col(c))
			}
		}
		h := tree.lookup(t, "base_link", "head")
		nearVec(t, "head", h.Translation, kinematics.HeadMount())
		nearVec(t, "head facing", h.Rotation.Rotate(mgl64.Vec3{1, 0, 0}), kinematics.HeadFacing(head[0], head[1]))
	}

	before := len(r.dds.Written("rt/tf"))
	odom := msg.Odometry{Header: msg.Header{Stamp: stamp, FrameID: "odom"}, ChildFrameID: "base_link"}
	odom.Pose.Pose.Position = msg.Point{X: 1.5, Y: -0.25}
	odom.Pose.Pose.Orientation = msg.Quaternion{Z: math.Sin(0.3), W: math.Cos(0.3)}
	if err := r.bus.Publish(msg.TopicTracksOdom, odom); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "odom → base_link on /tf", func() bool { return len(r.dds.Written("rt/tf")) > before })
	tree.add(t, r.decodeLast("rt/tf", "tf2_msgs/TFMessage"))
	if tree["base_link"].parent != "odom" {
		t.Fatalf("base_link's parent %q, want odom", tree["base_link"].parent)
	}
	// The left gripper in odom: the robot 1.5 m ahead, turned 0.6 rad.
	arm := kinematics.DefaultArm("left").Forward([]float64{-2.1, 1.5, -2.4, 2.2, -1.3}).Position
	want := mgl64.QuatRotate(0.6, mgl64.Vec3{0, 0, 1}).Rotate(arm).Add(mgl64.Vec3{1.5, -0.25, 0})
	nearVec(t, "left gripper in odom", tree.lookup(t, "odom", "left_gripper").Translation, want)
}

// TestHumanoidModelOnTF: the humanoid's limbs on /tf put its feet, hands
// and head where kinematics.HumanoidLimb does; without tracks there is no
// odometry to follow.
func TestHumanoidModelOnTF(t *testing.T) {
	r := newModelRig(t, urdf.Humanoid(), []string{"/saint/limb/leg_left", "/saint/limb/neck"})
	tree := tfTree{}
	tree.add(t, r.decodeLast("rt/tf_static", "tf2_msgs/TFMessage"))
	leg, _ := kinematics.HumanoidLimb(kinematics.LegLeft)
	q := []float64{-0.6, 0.2, 0.3, 1.2, -0.5, 0.1}
	var names []string
	for _, n := range leg.JointNames() {
		names = append(names, "left_"+n)
	}
	names = append(names, "head_yaw", "head_pitch")
	if err := r.bus.Publish(msg.RootMotorName(msg.MotorJointStates), msg.JointStates{Name: names, Position: append(q, 0.5, -0.2)}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "the limbs' transforms on /tf", func() bool { return len(r.dds.Written("rt/tf")) > 0 })
	tree.add(t, r.decodeLast("rt/tf", "tf2_msgs/TFMessage"))
	chain := leg.Chain(q)
	nearVec(t, "left foot", tree.lookup(t, "base_link", "left_foot").Translation, chain[len(chain)-1])
	neck, _ := kinematics.HumanoidLimb(kinematics.Neck)
	nearVec(t, "head facing", tree.lookup(t, "base_link", "head").Rotation.Rotate(mgl64.Vec3{1, 0, 0}), neck.Facing([]float64{0.5, -0.2}))
	if r.dds.Type("rt/saint/tracks/odom") != "" {
		t.Errorf("the humanoid bridges odometry")
	}
}

// TestModelOfRobot: the reference robot (no robot type, or its types)
// gets saint.urdf, the humanoid pi_plus.urdf.
func TestModelOfRobot(t *testing.T) {
	if m := bridge.ModelOf(nil); m == nil || m.Name != "saint" {
		t.Errorf("no robot type: model %v, want saint", m)
	}
	for typ, want := range map[string]string{"saint-T-0L10A2G3H0W": "saint", "saint_can-T-0L10A2G3H0W": "saint", "pi_plus-S-12L8A0G2H0W": "pi_plus"} {
		robot, err := bringup.Resolve(fixtures.Config(), typ)
		if err != nil {
			t.Fatal(err)
		}
		if m := bridge.ModelOf(robot); m == nil || m.Name != want {
			t.Errorf("%s: model %v, want %s", typ, m, want)
		}
	}
}

// TestModelTFFollowsTheClock: in simulation paced to the wall clock, /tf
// is stamped as /saint/tracks/odom is (the wall-clock time of the
// simulation's instant), and nothing goes on /tf before the simulation's
// clock is known.
func TestModelTFFollowsTheClock(t *testing.T) {
	r := newModelRigOn(t, urdf.Reference(), nil, bridge.SimClock)
	sim := clock.Epoch().Add(90 * time.Second)
	if err := r.bus.Publish(msg.TopicTracksOdom, odometryAt(sim)); err != nil {
		t.Fatal(err)
	}
	wall := time.Date(2026, time.November, 29, 1, 30, 0, 250_000_000, time.UTC)
	w := msg.TimeOf(wall)
	if err := r.bus.Publish(bridge.SimClockTopic, bridge.SimClockSample{Time: msg.TimeOf(sim), Wall: &w}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "/clock", func() bool { return len(r.dds.Written("rt/clock")) == 1 })
	if n := len(r.dds.Written("rt/tf")); n != 0 {
		t.Fatalf("%d /tf messages before the clock was known", n)
	}
	if err := r.bus.Publish(msg.TopicTracksOdom, odometryAt(sim.Add(1500*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	checkFor(t, "odom -> base_link on /tf", func() bool { return len(r.dds.Written("rt/tf")) == 1 })
	tf := r.decodeLast("rt/tf", "tf2_msgs/TFMessage")
	got := stampOf(tf["transforms"].([]any)[0].(map[string]any))
	odom := stampOf(r.decodeLast("rt/saint/tracks/odom", "nav_msgs/Odometry"))
	if want := wall.Add(1500 * time.Millisecond); !got.Equal(want) || !odom.Equal(want) {
		t.Errorf("/tf stamp %v, odometry %v: want both %v", got, odom, want)
	}
}
