package urdf

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
)

// Joint types, as URDF names them.
const (
	Revolute   = "revolute"   // turns about Axis within Lower…Upper
	Continuous = "continuous" // turns about Axis without limits (a sprocket)
	Fixed      = "fixed"      // does not move
)

// Joint connects a parent link to a child link.
type Joint struct {
	Name          string
	Type          string
	Parent, Child string
	// Origin is the child's frame in the parent's at angle 0: a
	// translation (m) and a roll-pitch-yaw rotation (rad, URDF's: about
	// fixed x, then y, then z).
	Origin mgl64.Vec3
	RPY    mgl64.Vec3
	// Axis is what a revolute or continuous joint turns about, in the
	// joint's frame (unit).
	Axis mgl64.Vec3
	// Lower and Upper bound a revolute joint, rad; Effort (N·m) and
	// Velocity (rad/s) are its limits as URDF requires them.
	Lower, Upper, Effort, Velocity float64
}

// Moves reports whether the joint has a position.
func (j Joint) Moves() bool { return j.Type == Revolute || j.Type == Continuous }

// Transform is a rigid transform: a rotation, then a translation.
type Transform struct {
	Translation mgl64.Vec3
	Rotation    mgl64.Quat
}

// Apply maps a point of the child frame into the parent frame.
func (t Transform) Apply(p mgl64.Vec3) mgl64.Vec3 {
	return t.Rotation.Rotate(p).Add(t.Translation)
}

// Then composes t (parent ← child) with u (child ← grandchild):
// parent ← grandchild.
func (t Transform) Then(u Transform) Transform {
	return Transform{Translation: t.Apply(u.Translation), Rotation: t.Rotation.Mul(u.Rotation).Normalize()}
}

// Transform is the child's frame in the parent's at position q (rad; not
// used by a fixed joint): the origin, then the turn about the axis.
func (j Joint) Transform(q float64) Transform {
	t := Transform{Translation: j.Origin, Rotation: rpyQuat(j.RPY)}
	if j.Moves() {
		t.Rotation = t.Rotation.Mul(mgl64.QuatRotate(q, j.Axis)).Normalize()
	}
	return t
}

// rpyQuat is URDF's roll-pitch-yaw rotation: Rz(yaw)·Ry(pitch)·Rx(roll).
func rpyQuat(rpy mgl64.Vec3) mgl64.Quat {
	return mgl64.QuatRotate(rpy[2], mgl64.Vec3{0, 0, 1}).
		Mul(mgl64.QuatRotate(rpy[1], mgl64.Vec3{0, 1, 0})).
		Mul(mgl64.QuatRotate(rpy[0], mgl64.Vec3{1, 0, 0}))
}

// Pose is the visual's frame in its link's.
func (v Visual) Pose() Transform { return Transform{Translation: v.Origin, Rotation: rpyQuat(v.RPY)} }

// Visual is a shape drawn in a link's frame: a box (Size), a cylinder
// along its z axis (Radius, Length) or a sphere (Radius).
type Visual struct {
	Shape  string // "box", "cylinder" or "sphere"
	Origin mgl64.Vec3
	RPY    mgl64.Vec3
	Size   mgl64.Vec3
	Radius float64
	Length float64
	Colour string // a material's name: "body", "joint", "accent"
}

// Link is one rigid part with what is drawn of it.
type Link struct {
	Name    string
	Visuals []Visual
}

// Robot is a URDF model: a tree of links joined by joints, rooted at
// Root.
type Robot struct {
	Name   string
	Root   string
	Links  []Link
	Joints []Joint
}

// File is where go generate writes the model: its name with ".urdf".
func (r *Robot) File() string { return r.Name + ".urdf" }

// MovingJoints lists the names of the joints that have a position, in
// the model's order.
func (r *Robot) MovingJoints() []string {
	var out []string
	for _, j := range r.Joints {
		if j.Moves() {
			out = append(out, j.Name)
		}
	}
	return out
}

// Joint returns the joint called name.
func (r *Robot) Joint(name string) (Joint, bool) {
	for _, j := range r.Joints {
		if j.Name == name {
			return j, true
		}
	}
	return Joint{}, false
}

// LinkPose is link's frame in the root's with the moving joints at
// positions (by joint name; a missing one is 0).
func (r *Robot) LinkPose(link string, positions map[string]float64) (Transform, error) {
	byChild := map[string]Joint{}
	for _, j := range r.Joints {
		byChild[j.Child] = j
	}
	t := Transform{Rotation: mgl64.QuatIdent()}
	for n := link; n != r.Root; {
		j, ok := byChild[n]
		if !ok {
			return Transform{}, fmt.Errorf("urdf: %s: link %q is not connected to %s", r.Name, n, r.Root)
		}
		t = j.Transform(positions[j.Name]).Then(t)
		n = j.Parent
	}
	return t, nil
}

// Check fails when the model is not one tree: a link named twice, a joint
// whose parent or child is not a link, a link with two parents, a link
// not reached from Root.
func (r *Robot) Check() error {
	links := map[string]bool{}
	for _, l := range r.Links {
		if links[l.Name] {
			return fmt.Errorf("urdf: %s: link %q given twice", r.Name, l.Name)
		}
		links[l.Name] = true
	}
	if !links[r.Root] {
		return fmt.Errorf("urdf: %s: root link %q is not defined", r.Name, r.Root)
	}
	parent := map[string]string{}
	names := map[string]bool{}
	for _, j := range r.Joints {
		if names[j.Name] {
			return fmt.Errorf("urdf: %s: joint %q given twice", r.Name, j.Name)
		}
		names[j.Name] = true
		if !links[j.Parent] || !links[j.Child] {
			return fmt.Errorf("urdf: %s: joint %q joins %q to %q, not both links", r.Name, j.Name, j.Parent, j.Child)
		}
		if _, ok := parent[j.Child]; ok || j.Child == r.Root {
			return fmt.Errorf("urdf: %s: link %q has two parents", r.Name, j.Child)
		}
		parent[j.Child] = j.Parent
	}
	for l := range links {
		for n, steps := l, 0; n != r.Root; steps++ {
			p, ok := parent[n]
			if !ok || steps > len(links) {
				return fmt.Errorf("urdf: %s: link %q is not reached from %q", r.Name, l, r.Root)
			}
			n = p
		}
	}
	return nil
}

// Colours of the materials Marshal declares, RGBA.
var colours = []struct{ name, rgba string }{
	{"body", "0.55 0.57 0.60 1"},
	{"joint", "0.20 0.22 0.25 1"},
	{"accent", "0.95 0.55 0.10 1"},
}

// Marshal writes the model as URDF XML. Numbers are written exactly
// (shortest round-trip form), so a model read back is the same model.
func (r *Robot) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\"?>\n")
	b.WriteString("<!-- Generated by go generate ./ros2/urdf from the kinematics package; do not edit. -->\n")
	fmt.Fprintf(&b, "<robot name=%q>\n", r.Name)
	for _, c := range colours {
		fmt.Fprintf(&b, "  <material name=%q><color rgba=%q/></material>\n", c.name, c.rgba)
	}
	for _, l := range r.Links {
		if len(l.Visuals) == 0 {
			fmt.Fprintf(&b, "  <link name=%q/>\n", l.Name)
			continue
		}
		fmt.Fprintf(&b, "  <link name=%q>\n", l.Name)
		for _, v := range l.Visuals {
			b.WriteString("    <visual>\n")
			fmt.Fprintf(&b, "      <origin xyz=%q rpy=%q/>\n", vec(v.Origin), vec(v.RPY))
			switch v.Shape {
			case "box":
				fmt.Fprintf(&b, "      <geometry><box size=%q/></geometry>\n", vec(v.Size))
			case "cylinder":
				fmt.Fprintf(&b, "      <geometry><cylinder radius=%q length=%q/></geometry>\n", num(v.Radius), num(v.Length))
			case "sphere":
				fmt.Fprintf(&b, "      <geometry><sphere radius=%q/></geometry>\n", num(v.Radius))
			}
			fmt.Fprintf(&b, "      <material name=%q/>\n", v.Colour)
			b.WriteString("    </visual>\n")
		}
		b.WriteString("  </link>\n")
	}
	for _, j := range r.Joints {
		fmt.Fprintf(&b, "  <joint name=%q type=%q>\n", j.Name, j.Type)
		fmt.Fprintf(&b, "    <parent link=%q/>\n    <child link=%q/>\n", j.Parent, j.Child)
		fmt.Fprintf(&b, "    <origin xyz=%q rpy=%q/>\n", vec(j.Origin), vec(j.RPY))
		if j.Moves() {
			fmt.Fprintf(&b, "    <axis xyz=%q/>\n", vec(j.Axis))
		}
		switch j.Type {
		case Revolute:
			fmt.Fprintf(&b, "    <limit lower=%q upper=%q effort=%q velocity=%q/>\n", num(j.Lower), num(j.Upper), num(j.Effort), num(j.Velocity))
		case Continuous:
			fmt.Fprintf(&b, "    <limit effort=%q velocity=%q/>\n", num(j.Effort), num(j.Velocity))
		}
		b.WriteString("  </joint>\n")
	}
	b.WriteString("</robot>\n")
	return b.Bytes()
}

func num(f float64) string {
	if f == 0 {
		return "0" // never "-0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func vec(v mgl64.Vec3) string { return num(v[0]) + " " + num(v[1]) + " " + num(v[2]) }

// The parts of URDF's XML Parse reads.
type xmlRobot struct {
	Name   string     `xml:"name,attr"`
	Links  []xmlLink  `xml:"link"`
	Joints []xmlJoint `xml:"joint"`
}

type xmlLink struct {
	Name    string `xml:"name,attr"`
	Visuals []struct {
		Origin *struct {
			XYZ string `xml:"xyz,attr"`
			RPY string `xml:"rpy,attr"`
		} `xml:"origin"`
		Geometry struct {
			Box *struct {
				Size string `xml:"size,attr"`
			} `xml:"box"`
			Cylinder *struct {
				Radius float64 `xml:"radius,attr"`
				Length float64 `xml:"length,attr"`
			} `xml:"cylinder"`
			Sphere *struct {
				Radius float64 `xml:"radius,attr"`
			} `xml:"sphere"`
		} `xml:"geometry"`
		Material *struct {
			Name string `xml:"name,attr"`
		} `xml:"material"`
	} `xml:"visual"`
}

type xmlJoint struct {
	Name   string `xml:"name,attr"`
	Type   string `xml:"type,attr"`
	Parent struct {
		Link string `xml:"link,attr"`
	} `xml:"parent"`
	Child struct {
		Link string `xml:"link,attr"`
	} `xml:"child"`
	Origin *struct {
		XYZ string `xml:"xyz,attr"`
		RPY string `xml:"rpy,attr"`
	} `xml:"origin"`
	Axis *struct {
		XYZ string `xml:"xyz,attr"`
	} `xml:"axis"`
	Limit *struct {
		Lower    string `xml:"lower,attr"`
		Upper    string `xml:"upper,attr"`
		Effort   string `xml:"effort,attr"`
		Velocity string `xml:"velocity,attr"`
	} `xml:"limit"`
}

// Parse reads a URDF's links, with their boxes, cylinders and spheres
// (meshes are skipped), and joints. The root is the one link no joint has
// as its child.
func Parse(data []byte) (*Robot, error) {
	var x xmlRobot
	if err := xml.Unmarshal(data, &x); err != nil {
		return nil, fmt.Errorf("urdf: %w", err)
	}
	r := &Robot{Name: x.Name}
	children := map[string]bool{}
	for _, xj := range x.Joints {
		j := Joint{Name: xj.Name, Type: xj.Type, Parent: xj.Parent.Link, Child: xj.Child.Link}
		if j.Moves() {
			j.Axis = mgl64.Vec3{1, 0, 0} // URDF's default
		}
		var err error
		if xj.Origin != nil {
			if j.Origin, err = parseVec(xj.Origin.XYZ); err == nil {
				j.RPY, err = parseVec(xj.Origin.RPY)
			}
		}
		if err == nil && xj.Axis != nil {
			j.Axis, err = parseVec(xj.Axis.XYZ)
		}
		if err == nil && xj.Limit != nil {
			for _, f := range []struct {
				s string
				v *float64
			}{{xj.Limit.Lower, &j.Lower}, {xj.Limit.Upper, &j.Upper}, {xj.Limit.Effort, &j.Effort}, {xj.Limit.Velocity, &j.Velocity}} {
				if f.s == "" {
					continue
				}
				if *f.v, err = strconv.ParseFloat(f.s, 64); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("urdf: joint %q: %w", xj.Name, err)
		}
		switch j.Type {
		case Revolute, Continuous, Fixed:
		default:
			return nil, fmt.Errorf("urdf: joint %q: type %q: want revolute, continuous or fixed", j.Name, j.Type)
		}
		children[j.Child] = true
		r.Joints = append(r.Joints, j)
	}
	for _, xl := range x.Links {
		l := Link{Name: xl.Name}
		for _, xv := range xl.Visuals {
			var v Visual
			var err error
			if xv.Origin != nil {
				if v.Origin, err = parseVec(xv.Origin.XYZ); err == nil {
					v.RPY, err = parseVec(xv.Origin.RPY)
				}
			}
			g := xv.Geometry
			switch {
			case err != nil:
			case g.Box != nil:
				v.Shape = "box"
				v.Size, err = parseVec(g.Box.Size)
			case g.Cylinder != nil:
				v.Shape, v.Radius, v.Length = "cylinder", g.Cylinder.Radius, g.Cylinder.Length
			case g.Sphere != nil:
				v.Shape, v.Radius = "sphere", g.Sphere.Radius
			default:
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("urdf: link %q visual: %w", xl.Name, err)
			}
			if xv.Material != nil {
				v.Colour = xv.Material.Name
			}
			l.Visuals = append(l.Visuals, v)
		}
		r.Links = append(r.Links, l)
		if !children[xl.Name] {
			if r.Root != "" {
				return nil, fmt.Errorf("urdf: links %q and %q both have no parent", r.Root, xl.Name)
			}
			r.Root = xl.Name
		}
	}
	return r, r.Check()
}

func parseVec(s string) (mgl64.Vec3, error) {
	var v mgl64.Vec3
	if s == "" {
		return v, nil
	}
	f := strings.Fields(s)
	if len(f) != 3 {
		return v, fmt.Errorf("want three numbers, got %q", s)
	}
	for i := range v {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return v, fmt.Errorf("want three numbers, got %q", s)
		}
		v[i] = x
	}
	return v, nil
}
