package bridge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/ros2/urdf"
)

// The names robot_state_publisher and tf2 use, which rviz2 reads.
const (
	RobotDescriptionTopic = "/robot_description"
	TFTopic               = "/tf"
	TFStaticTopic         = "/tf_static"
)

// QoS of the model's topics, as robot_state_publisher and tf2's
// broadcasters set them: the description and the static transforms
// latched (reliable, transient local, keep last 1), so that rviz2 started
// later gets them; /tf reliable and volatile with tf2's depth of 100.
var (
	LatchedQoS = QoS{Reliable: true, Depth: 1, TransientLocal: true}
	TFQoS      = QoS{Reliable: true, Depth: 100}
)

// startModel publishes the robot's model: its URDF on /robot_description,
// the fixed joints' transforms on /tf_static, and on /tf the moving
// joints' transforms from the root middleware's joint_states (the
// robot-wide joint names the model's joints have) and, on a robot with
// tracks, odom → base_link from the odometry.
func (b *Bridge) startModel(r *urdf.Robot) error {
	if err := r.Check(); err != nil {
		return fmt.Errorf("bridge: Options.Model: %w", err)
	}
	str := b.message("std_msgs/String")
	tfm := b.message("tf2_msgs/TFMessage")
	if b.o.Filter.Bridged(RobotDescriptionTopic) {
		w, err := b.o.DDS.NewWriter("rt"+b.rosName(RobotDescriptionTopic), str.DDSTypeName(), LatchedQoS)
		if err != nil {
			return err
		}
		cdr, err := b.reg.Encode(str, map[string]any{"data": string(r.Marshal())}, nil)
		if err == nil {
			err = w.Write(cdr)
		}
		if err != nil {
			return fmt.Errorf("bridge: writing %s: %w", RobotDescriptionTopic, err)
		}
	}
	if b.o.Filter.Bridged(TFStaticTopic) {
		w, err := b.o.DDS.NewWriter("rt"+b.rosName(TFStaticTopic), tfm.DDSTypeName(), LatchedQoS)
		if err != nil {
			return err
		}
		// Static transforms hold at any time for tf2, whatever their
		// stamp: they are written once, stamped zero (not mapped by the
		// clock rule: no time is meant).
		var fixed []any
		for _, j := range r.Joints {
			if !j.Moves() {
				fixed = append(fixed, transformStamped(map[string]any{}, j.Parent, j.Child, j.Transform(0)))
			}
		}
		cdr, err := b.reg.Encode(tfm, map[string]any{"transforms": fixed}, nil)
		if err == nil {
			err = w.Write(cdr)
		}
		if err != nil {
			return fmt.Errorf("bridge: writing %s: %w", TFStaticTopic, err)
		}
	}
	if !b.o.Filter.Bridged(TFTopic) {
		return nil
	}
	tf, err := b.o.DDS.NewWriter("rt"+b.rosName(TFTopic), tfm.DDSTypeName(), TFQoS)
	if err != nil {
		return err
	}
	write := func(transforms []any) {
		v := map[string]any{"transforms": transforms}
		// The stamps follow the bridge's clock rule, as /joint_states's
		// and the odometry's do (docs/ros2.md, Time).
		if !b.restamp(tfm, v) {
			return
		}
		cdr, err := b.reg.Encode(tfm, v, nil)
		if err == nil {
			err = tf.Write(cdr)
		}
		if err != nil {
			b.reject("dropped a transform", TFTopic, err)
			return
		}
		b.stats.out.Add(1)
	}
	joints := map[string]urdf.Joint{}
	for _, j := range r.Joints {
		if j.Moves() {
			joints[j.Name] = j
		}
	}
	sub, err := b.o.Bus.Subscribe(msg.RootMotorName(msg.MotorJointStates), bus.QoS{Reliability: bus.Reliable, Depth: 10}, b.o.Exec, func(m bus.Msg) {
		var js struct {
			Header   json.RawMessage `json:"header"`
			Name     []string        `json:"name"`
			Position []float64       `json:"position"`
		}
		if err := json.Unmarshal(m.Data, &js); err != nil {
			b.reject("dropped joint states that do not decode", TFTopic, err)
			return
		}
		header, err := decodeJSON(js.Header)
		if err != nil {
			header = map[string]any{}
		}
		var out []any
		for i, n := range js.Name {
			j, ok := joints[n]
			if !ok || i >= len(js.Position) {
				continue
			}
			out = append(out, transformStamped(header, j.Parent, j.Child, j.Transform(js.Position[i])))
		}
		if len(out) > 0 {
			write(out)
		}
	})
	if err != nil {
		return err
	}
	b.addSub(sub)
	if !b.hasRole(msg.RoleTracks, "") {
		return nil
	}
	sub, err = b.o.Bus.Subscribe(msg.TopicTracksOdom, bus.QoS{Reliability: bus.Reliable, Depth: 10}, b.o.Exec, func(m bus.Msg) {
		var odom msg.Odometry
		if err := json.Unmarshal(m.Data, &odom); err != nil {
			b.reject("dropped odometry that does not decode", TFTopic, err)
			return
		}
		p, q := odom.Pose.Pose.Position, odom.Pose.Pose.Orientation
		t := urdf.Transform{Translation: mgl64.Vec3{p.X, p.Y, p.Z}, Rotation: mgl64.Quat{W: q.W, V: mgl64.Vec3{q.X, q.Y, q.Z}}}
		header := map[string]any{"stamp": map[string]any{"sec": int64(odom.Header.Stamp.Sec), "nanosec": int64(odom.Header.Stamp.Nanosec)}}
		write([]any{transformStamped(header, odom.Header.FrameID, odom.ChildFrameID, t)})
	})
	if err != nil {
		return err
	}
	b.addSub(sub)
	return nil
}

// transformStamped is a geometry_msgs/TransformStamped of child in
// parent, stamped as header says (frame_id replaced by parent).
func transformStamped(header map[string]any, parent, child string, t urdf.Transform) map[string]any {
	h := map[string]any{"frame_id": parent}
	if s, ok := header["stamp"]; ok {
		h["stamp"] = s
	}
	return map[string]any{
		"header":         h,
		"child_frame_id": child,
		"transform": map[string]any{
			"translation": map[string]any{"x": t.Translation[0], "y": t.Translation[1], "z": t.Translation[2]},
			"rotation":    map[string]any{"x": t.Rotation.V[0], "y": t.Rotation.V[1], "z": t.Rotation.V[2], "w": t.Rotation.W},
		},
	}
}

// hasRole reports whether the robot has role (and instance, "" for any).
func (b *Bridge) hasRole(role, instance string) bool {
	for _, r := range b.roles() {
		if r[0] == role && (instance == "" || r[1] == instance) {
			return true
		}
	}
	return false
}

// ModelOf is the URDF model of a robot configuration (nil: the reference
// robot): the humanoid's for a robot with limbs (role limb), the
// reference robot's for one with its head, arms or tracks, and none for a
// robot with neither, whose geometry no model here describes.
func ModelOf(robot *bringup.Robot) *urdf.Robot {
	var reference bool
	for _, p := range RolesOf(robot) {
		switch {
		case strings.HasPrefix(p, "/saint/limb/"):
			return urdf.Humanoid()
		case strings.HasPrefix(p, "/saint/arms/"), p == "/saint/head", p == "/saint/tracks":
			reference = true
		}
	}
	if reference {
		return urdf.Reference()
	}
	return nil
}
