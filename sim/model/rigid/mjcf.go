package rigid

import (
	"fmt"
	"math"
	"strings"
)

// MJCFBodies returns the chain as nested MuJoCo <body> elements, one hinge
// each, named names[i], with range limits[i] (rad) and the joint's
// armature, from the chain's own numbers. MuJoCo refuses massless moving
// bodies, so a body lighter than 1e-9 kg is written as 1e-9 kg at its
// joint (which changes no dynamics a servo's armature does not swamp).
// inner, when not empty, is placed inside the last body (a gripper, say).
//
// The limits stand for the Go model's hard stops, which are inelastic
// (Stop). MuJoCo's limit is a one-sided spring and damper: it only pushes,
// so a joint leaves it when the damper's pull matches the spring's push —
// critically damped, at e⁻² ≈ 14 % of the speed it arrived with, which
// inside a servo's deadband leaves the joint somewhere else. Overdamped
// twenty times (solreflimit "0.0002 20": the damping of a 0.2 ms time
// constant, the stiffness 400 times lower) the joint creeps back out at
// almost no speed, as from an inelastic stop, after sinking about 0.5 mrad
// into it at 7.5 rad/s.
func (c *Chain) MJCFBodies(names []string, limits [][2]float64, inner string) string {
	var b strings.Builder
	indent := "    "
	for i, j := range c.joints {
		if i == 0 {
			j.Offset = j.Offset.Add(c.base)
		}
		fmt.Fprintf(&b, "%s<body name=\"%s\" pos=\"%g %g %g\">\n", indent, names[i], j.Offset[0], j.Offset[1], j.Offset[2])
		fmt.Fprintf(&b, "%s  <joint name=\"%s\" type=\"hinge\" axis=\"%g %g %g\" limited=\"true\" range=\"%g %g\" armature=\"%g\" solreflimit=\"0.0002 20\" solimplimit=\"0.99 0.999 0.0001\"/>\n",
			indent, names[i], j.Axis[0], j.Axis[1], j.Axis[2], limits[i][0], limits[i][1], j.Armature)
		m, in := j.Mass, j.Inertia
		if m < 1e-9 {
			m = 1e-9
		}
		for k := 0; k < 3; k++ {
			in[k][k] = math.Max(in[k][k], 1e-12)
		}
		fmt.Fprintf(&b, "%s  <inertial pos=\"%g %g %g\" mass=\"%g\" fullinertia=\"%g %g %g %g %g %g\"/>\n",
			indent, j.COM[0], j.COM[1], j.COM[2], m, in[0][0], in[1][1], in[2][2], in[0][1], in[0][2], in[1][2])
		indent += "  "
	}
	if inner != "" {
		fmt.Fprintf(&b, "%s%s\n", indent, inner)
	}
	for range c.joints {
		indent = indent[:len(indent)-2]
		fmt.Fprintf(&b, "%s</body>\n", indent)
	}
	return b.String()
}
