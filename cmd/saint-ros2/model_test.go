package main

import (
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/ros2/cyclone"
	"github.com/saint-os/saint/ros2/urdf"
)

// tfEntry is one transform as tf2 keeps it: child in parent.
type tfEntry struct {
	parent string
	t      urdf.Transform
}

func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return math.NaN()
}

// transforms decodes a tf2_msgs/TFMessage into entries by child frame,
// and the stamp of its first transform.
func transforms(m map[string]any) (map[string]tfEntry, [2]float64) {
	out := map[string]tfEntry{}
	var stamp [2]float64
	for i, x := range m["transforms"].([]any) {
		ts := x.(map[string]any)
		h := ts["header"].(map[string]any)
		if i == 0 {
			s := h["stamp"].(map[string]any)
			stamp = [2]float64{number(s["sec"]), number(s["nanosec"])}
		}
		tr := ts["transform"].(map[string]any)
		p, q := tr["translation"].(map[string]any), tr["rotation"].(map[string]any)
		out[ts["child_frame_id"].(string)] = tfEntry{h["frame_id"].(string), urdf.Transform{
			Translation: mgl64.Vec3{number(p["x"]), number(p["y"]), number(p["z"])},
			Rotation:    mgl64.Quat{W: number(q["w"]), V: mgl64.Vec3{number(q["x"]), number(q["y"]), number(q["z"])}},
		}}
	}
	return out, stamp
}

// chain is frame's pose in root through tree, as tf2's lookupTransform
// composes it; false when the tree does not connect them.
func chain(tree map[string]tfEntry, root, frame string) (urdf.Transform, bool) {
	out := urdf.Transform{Rotation: mgl64.QuatIdent()}
	for n, steps := frame, 0; n != root; steps++ {
		e, ok := tree[n]
		if !ok || steps > len(tree) {
			return out, false
		}
		out = e.t.Then(out)
		n = e.parent
	}
	return out, true
}

// TestModelOverROS2 runs saint-sim --ros2 --adopt and reads, as rviz2
// does, the robot's model over Cyclone DDS: the URDF on
// /robot_description and the fixed links on /tf_static (both latched:
// subscribed after the bridge wrote them), the joints' transforms on /tf.
// With the left arm sent to a target pose, the /tf transforms stamped as
// a /joint_states sample, chained through /tf_static, put the gripper
// where the kinematics put it for that sample's joint angles (1e-9 m),
// odom → base_link arrives from the odometry, and every link of the model
// is placed (each moving joint is in the robot's joint states). With
// SAINT_ROS2_SNAPSHOT=file.png it draws what it received with gonum/plot
// (docs/ros2/model-from-tf.png: make ros2-snapshot).
func TestModelOverROS2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulation")
	}
	dir := buildBins(t)
	domain := loopbackDDS(t)
	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--ros2", "--adopt", "--speed", "1",
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	p := newPeer(t, domain)

	var mu sync.Mutex
	static := map[string]tfEntry{}
	var description string
	var dynamic []map[string]any
	var states []map[string]any
	latched := cyclone.QoS{Reliable: true, Depth: 1, TransientLocal: true}
	take := func(topic, typ string, q cyclone.QoS, fn func(map[string]any)) {
		m := p.message(typ)
		if _, err := p.p.NewReader("rt"+topic, m.DDSTypeName(), q, func(cdr []byte) {
			v, _, err := p.reg.Decode(m, cdr)
			if err != nil {
				t.Errorf("%s: %v", topic, err)
				return
			}
			mu.Lock()
			fn(v)
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The latched topics first, once the bridge has written them: rviz2
	// started after the robot.
	odomCh, _ := p.subscribe(msg.TopicTracksOdom, "nav_msgs/Odometry")
	waitFor(t, 60*time.Second, "odometry (the bridge running)", func() bool { return len(odomCh) > 0 })
	take("/robot_description", "std_msgs/String", latched, func(v map[string]any) { description = v["data"].(string) })
	take("/tf_static", "tf2_msgs/TFMessage", latched, func(v map[string]any) {
		tf, _ := transforms(v)
		for k, e := range tf {
			static[k] = e
		}
	})
	take("/tf", "tf2_msgs/TFMessage", cyclone.QoS{Reliable: true, Depth: 100}, func(v map[string]any) { dynamic = append(dynamic, v) })
	take("/joint_states", "sensor_msgs/JointState", cyclone.QoS{Reliable: true}, func(v map[string]any) { states = append(states, v) })
	waitFor(t, 10*time.Second, "/robot_description and /tf_static, latched", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return description != "" && len(static) > 0
	})
	model, err := urdf.Parse([]byte(description))
	if err != nil {
		t.Fatal(err)
	}
	if model.Name != "saint" || string(urdf.Reference().Marshal()) != description {
		t.Fatalf("/robot_description is robot %q, not saint.urdf", model.Name)
	}

	// The arms to poses, as in docs/ros2.md, for 3 s.
	targets := map[string]mgl64.Vec3{"left": {0.40, 0.30, 0.55}, "right": {0.35, -0.25, 0.25}}
	poses := map[string]*cyclone.Writer{}
	for side := range targets {
		if poses[side], err = p.p.NewWriter("rt/saint/arms/"+side+"/target_pose", p.message("geometry_msgs/PoseStamped").DDSTypeName(), cyclone.QoS{Reliable: true}); err != nil {
			t.Fatal(err)
		}
	}
	// The targets are sent at 10 Hz for 3 s, as a planner streams them: the
	// stream's length is the stimulus.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		for side, x := range targets {
			target := map[string]any{"header": map[string]any{"frame_id": "base_link"},
				"pose": map[string]any{"position": map[string]any{"x": x[0], "y": x[1], "z": x[2]}, "orientation": map[string]any{"w": 1.0}}}
			if err := poses[side].Write(p.encode("geometry_msgs/PoseStamped", target, nil)); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A /joint_states sample of the left arm and the /tf message made
	// from the same bus message (the same stamp).
	var tree map[string]tfEntry
	var angles []float64
	waitFor(t, 10*time.Second, "a left arm /joint_states sample and its /tf", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for i := len(states) - 1; i >= 0; i-- {
			s := states[i]
			names := s["name"].([]any)
			if !slices.Contains(names, any("left_shoulder_pan")) {
				continue
			}
			st := s["header"].(map[string]any)["stamp"].(map[string]any)
			want := [2]float64{number(st["sec"]), number(st["nanosec"])}
			for _, d := range dynamic {
				tf, stamp := transforms(d)
				if _, ok := tf["left_shoulder_pan_link"]; !ok || stamp != want {
					continue
				}
				var ns []string
				var pos []float64
				for k, n := range names {
					ns = append(ns, n.(string))
					pos = append(pos, s["position"].([]any)[k].(float64))
				}
				q := kinematics.OrderArm(ns, pos)
				angles = q[:]
				tree = map[string]tfEntry{}
				for k, e := range static {
					tree[k] = e
				}
				for k, e := range tf {
					tree[k] = e
				}
				// The other groups' latest transforms, for the drawing.
				for _, d2 := range dynamic {
					more, _ := transforms(d2)
					for k, e := range more {
						if _, ok := tf[k]; !ok {
							tree[k] = e
						}
					}
				}
				return true
			}
		}
		return false
	})
	g, ok := chain(tree, "base_link", "left_gripper")
	if !ok {
		t.Fatal("/tf and /tf_static do not connect left_gripper to base_link")
	}
	want := kinematics.DefaultArm("left").Forward(angles)
	if d := g.Translation.Sub(want.Position).Len(); d > 1e-9 {
		t.Errorf("left gripper from /tf %v, kinematics of /joint_states %v (%.3g m apart)", g.Translation, want.Position, d)
	}
	if d := want.Position.Sub(targets["left"]).Len(); d > 0.05 {
		t.Errorf("the left gripper is %.3f m from its target pose: the arm did not follow it", d)
	}
	var odom map[string]tfEntry
	waitFor(t, 10*time.Second, "odom → base_link on /tf", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range dynamic {
			tf, _ := transforms(d)
			if e, ok := tf["base_link"]; ok && e.parent == "odom" {
				odom = tf
				return true
			}
		}
		return false
	})
	tree["base_link"] = odom["base_link"]
	// Every joint of the model moved by the robot's joint states: each
	// link is on the tree from odom, as rviz2 needs to draw it.
	for _, l := range model.Links {
		if _, ok := chain(tree, "odom", l.Name); !ok {
			t.Errorf("no transform places link %s in odom (its joint is in no /joint_states)", l.Name)
		}
	}
	if out := os.Getenv("SAINT_ROS2_SNAPSHOT"); out != "" {
		if err := drawModel(out, model, tree); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", out)
	}
}

// drawModel draws the visuals of model's links (boxes as their edges,
// cylinders as thick lines) and their origins (dots) at their poses in
// odom by tree (the received /tf and /tf_static), seen from the side
// (x–z) and from above (x–y).
func drawModel(path string, model *urdf.Robot, tree map[string]tfEntry) error {
	views := []struct {
		title string
		a, b  int
		xl    string
		yl    string
	}{{"side (odom x–z)", 0, 2, "x, m", "z, m"}, {"above (odom x–y)", 0, 1, "x, m", "y, m"}}
	plots := make([][]*plot.Plot, 1)
	for _, v := range views {
		p := plot.New()
		p.Title.Text = v.title
		p.X.Label.Text, p.Y.Label.Text = v.xl, v.yl
		p.Add(plotter.NewGrid())
		proj := func(q mgl64.Vec3) plotter.XY { return plotter.XY{X: q[v.a], Y: q[v.b]} }
		line := func(xy plotter.XYs, c color.Color, width vg.Length) error {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			l.Color, l.Width = c, width
			p.Add(l)
			return nil
		}
		colours := map[string]color.Color{
			"body": color.RGBA{R: 110, G: 115, B: 125, A: 255}, "joint": color.RGBA{R: 40, G: 45, B: 55, A: 255},
			"accent": color.RGBA{R: 230, G: 120, B: 20, A: 255},
		}
		var joints plotter.XYs
		for _, l := range model.Links {
			pose, ok := chain(tree, "odom", l.Name)
			if !ok {
				return &missingFrame{l.Name}
			}
			joints = append(joints, proj(pose.Translation))
			for _, vis := range l.Visuals {
				at := pose.Then(vis.Pose())
				c := colours[vis.Colour]
				if c == nil {
					c = color.Black
				}
				switch vis.Shape {
				case "box":
					// The twelve edges of the box.
					h := vis.Size.Mul(0.5)
					corner := func(i int) mgl64.Vec3 {
						s := mgl64.Vec3{-1, -1, -1}
						for k := 0; k < 3; k++ {
							if i&(1<<k) != 0 {
								s[k] = 1
							}
						}
						return at.Apply(mgl64.Vec3{s[0] * h[0], s[1] * h[1], s[2] * h[2]})
					}
					for i := 0; i < 8; i++ {
						for k := 0; k < 3; k++ {
							if i&(1<<k) == 0 {
								if err := line(plotter.XYs{proj(corner(i)), proj(corner(i | 1<<k))}, c, vg.Points(1.5)); err != nil {
									return err
								}
							}
						}
					}
				case "cylinder":
					a, b := at.Apply(mgl64.Vec3{0, 0, -vis.Length / 2}), at.Apply(mgl64.Vec3{0, 0, vis.Length / 2})
					if err := line(plotter.XYs{proj(a), proj(b)}, c, vg.Points(5)); err != nil {
						return err
					}
				}
			}
		}
		dots, err := plotter.NewScatter(joints)
		if err != nil {
			return err
		}
		dots.Color = color.RGBA{R: 230, G: 120, B: 20, A: 255}
		dots.Radius = vg.Points(2)
		p.Add(dots)
		p.X.Min, p.X.Max = p.X.Min-0.1, p.X.Max+0.1
		p.Y.Min, p.Y.Max = math.Min(p.Y.Min, 0)-0.1, p.Y.Max+0.1
		// Equal scales on both axes.
		span := math.Max(p.X.Max-p.X.Min, p.Y.Max-p.Y.Min)
		cx, cy := (p.X.Min+p.X.Max)/2, (p.Y.Min+p.Y.Max)/2
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = cx-span/2, cx+span/2, cy-span/2, cy+span/2
		plots[0] = append(plots[0], p)
	}
	const w, h = 16 * vg.Centimeter, 9 * vg.Centimeter
	img := vgimg.New(2*w, h+vg.Centimeter)
	dc := draw.New(img)
	title := draw.Crop(dc, 0, 0, h, 0)
	titleFont := plot.DefaultFont
	titleFont.Size = vg.Points(11)
	title.FillText(draw.TextStyle{Color: color.Black, Font: titleFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter},
		vg.Point{X: w, Y: h + vg.Centimeter/3},
		"The reference robot as saint-ros2 published it (/robot_description, /tf_static, /tf), drawn with gonum/plot, not rviz2")
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter / 2, PadTop: vg.Centimeter, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for i, p := range plots[0] {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type missingFrame struct{ frame string }

func (m *missingFrame) Error() string { return "no transform reaches frame " + m.frame + " from odom" }
