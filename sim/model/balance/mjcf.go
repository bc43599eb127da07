package balance

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// MJCF returns the balancing base as a MuJoCo model (MJCF) with the given
// timestep (s) and the RK4 integrator, from the base's own parameters: a
// free body of BodyMass with its centre of mass COMHeight above the axle
// (pitch inertia BodyInertia, yaw YawInertia; the roll inertia, which the
// Go model has no use for, equal to the pitch's) on two wheels of
// WheelMass and WheelInertia, hinged WheelBase apart at the axle, that
// touch the floor with friction and roll on it — the contact the Go model
// replaces with rolling without slip and Coulomb sliding. The body is
// named "body" and the wheels "wheel_left" and "wheel_right"; the motors'
// torque and the bearings' friction are applied as the wheel hinges'
// generalised forces (the reaction acts on the body), a push with
// xfrc_applied at the body's centre of mass.
//
// The floor is a plane of Friction, or, with friction patches (Floor,
// SetFloor), a row of boxes whose tops are the floor, one per strip of
// x between the patches' edges, each with the friction FrictionAt gives
// there (so overlapping patches resolve as in the Go model). MuJoCo takes
// the larger of two touching geoms' friction, so the wheels carry the
// smallest of the floor's.
//
// Each bump rising from the floor (Height > 0) is a height field named
// "bump_0", "bump_1", … (in Bumps' order) spanning it, MJCFBumpColumns
// samples along x and two across, centred at At, whose top is Height: MuJoCo
// reads a height field's samples from a file or from the caller, so the
// caller fills them (BumpSample). Its friction is the floor's at At. Dips
// are not in the model.
func (b *Balance) MJCF(timestep float64) string {
	p := b.p
	// A disc's moments about its diameters are half its axial one; MuJoCo
	// requires a physically possible inertia.
	wd := p.WheelInertia / 2
	floor, wheelMu := b.mjcfFloor()
	wheel := func(name string, y float64) string {
		return fmt.Sprintf(`<body name="%s" pos="0 %g 0">
        <joint name="%s" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 0" mass="%g" diaginertia="%g %g %g"/>
        <geom type="sphere" size="%g" friction="%g 0.005 0.0001" solref="0.002 1" contype="1" conaffinity="1"/>
      </body>`, name, y, name, p.WheelMass, wd, p.WheelInertia, wd, p.WheelRadius, wheelMu)
	}
	var assets strings.Builder
	for i, bp := range b.bumps {
		if bp.Height <= 0 {
			continue
		}
		fmt.Fprintf(&assets, "    <hfield name=\"bump_%d\" nrow=\"2\" ncol=\"%d\" size=\"%g 1 %g 0.05\"/>\n", i, MJCFBumpColumns, bp.Length/2, bp.Height)
		floor += fmt.Sprintf("    <geom name=\"bump_%d\" type=\"hfield\" hfield=\"bump_%d\" pos=\"%g 0 0\" friction=\"%g 0.005 0.0001\" solref=\"0.002 1\" contype=\"1\" conaffinity=\"1\"/>\n",
			i, i, bp.At, b.FrictionAt(bp.At))
	}
	asset := ""
	if assets.Len() > 0 {
		asset = "  <asset>\n" + assets.String() + "  </asset>\n"
	}
	return fmt.Sprintf(`<mujoco model="balance">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="RK4" gravity="0 0 %g"/>
%s  <worldbody>
%s    <body name="body" pos="0 0 %g">
      <freejoint name="base"/>
      <inertial pos="0 0 %g" mass="%g" diaginertia="%g %g %g"/>
      %s
      %s
    </body>
  </worldbody>
</mujoco>
`, timestep, -StandardGravity, asset, floor, p.WheelRadius, p.COMHeight, p.BodyMass, p.BodyInertia, p.BodyInertia, p.YawInertia,
		wheel("wheel_left", p.WheelBase/2), wheel("wheel_right", -p.WheelBase/2))
}

// MJCFBumpColumns is how many samples along x a bump's height field has.
const MJCFBumpColumns = 61

// BumpSample returns sample c (0 to MJCFBumpColumns−1, along x) of bump
// i's height field: the floor's height there over the bump's.
func (b *Balance) BumpSample(i, c int) float32 {
	bp := b.bumps[i]
	x := bp.At - bp.Length/2 + bp.Length*float64(c)/(MJCFBumpColumns-1)
	u := 2 * math.Pi * (x - bp.At) / bp.Length
	return float32((1 + math.Cos(u)) / 2)
}

// mjcfFloor returns the floor's geoms and the friction the wheels carry.
func (b *Balance) mjcfFloor() (string, float64) {
	const reach = 50.0 // m each way from the origin
	// A box's top is the floor: it reaches depth below it.
	const depth = 0.05
	geom := func(name, shape, size string, x, z, mu float64) string {
		return fmt.Sprintf("    <geom name=\"%s\" type=\"%s\" size=\"%s\" pos=\"%g 0 %g\" friction=\"%g 0.005 0.0001\" solref=\"0.002 1\" contype=\"1\" conaffinity=\"1\"/>\n",
			name, shape, size, x, z, mu)
	}
	if len(b.floor) == 0 {
		return geom("floor", "plane", fmt.Sprintf("%g %g 0.1", reach, reach), 0, 0, b.p.Friction), b.p.Friction
	}
	edges := []float64{-reach, reach}
	for _, pt := range b.floor {
		edges = append(edges, math.Max(-reach, math.Min(reach, pt.From)), math.Max(-reach, math.Min(reach, pt.To)))
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	var s strings.Builder
	lowest := math.Inf(1)
	from, mu := edges[0], b.FrictionAt((edges[0]+edges[1])/2)
	n := 0
	for i := 1; i < len(edges); i++ {
		next := math.Inf(1) // the friction after this edge
		if i+1 < len(edges) {
			next = b.FrictionAt((edges[i] + edges[i+1]) / 2)
		}
		if i+1 < len(edges) && next == mu {
			continue // the same floor goes on
		}
		s.WriteString(geom(fmt.Sprintf("floor_%d", n), "box", fmt.Sprintf("%g %g %g", (edges[i]-from)/2, reach, depth/2), (from+edges[i])/2, -depth/2, mu))
		lowest = math.Min(lowest, mu)
		from, mu, n = edges[i], next, n+1
	}
	return s.String(), lowest
}
