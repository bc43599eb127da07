package tracks

import (
	"fmt"
	"math"
	"strings"
)

// MJCF rollers: each is a capsule of the sprocket's radius lying across
// the track, on a hinge (its spin) and a vertical slide (its suspension).
const (
	mjcfRollerMass       = 0.01   // kg: light, so a roller's hop off the floor carries little momentum
	mjcfRollerDeflection = 0.0005 // m: each roller's spring under its share of the weight
	mjcfRollerHalfWidth  = 0.001  // m: half the capsule's length, both contacts at nearly one point
)

// MJCF returns the tracked base as a MuJoCo model (MJCF) with the given
// timestep (s) and MuJoCo's semi-implicit Euler integrator (its RK4, which
// repeats the contacts' solution four times a step, gives the same errors
// within 0.002 rad of heading RMS), from the base's own parameters, in
// which MuJoCo's contacts make the ground's forces on the tracks.
//
// The body of Mass and YawInertia moves in the plane and up and down
// (joints x, y, yaw, z: degrees of freedom 0–3) over a floor plane. Each
// track touches the floor through ContactPoints rollers at the Go model's
// contact points (ContactLength, Gauge): capsules of SprocketRadius lying
// across the track, each on a vertical slide, a stiff critically damped
// spring that carries an equal share of the weight, and on a hinge geared to
// its motor shaft by a joint equality (roller angle = motor angle/GearRatio,
// so a roller's surface moves at the track's speed). The track's inertia
// is spread over its rollers (armature); the motor shafts (hinges
// "motor_left" and "motor_right", the last two degrees of freedom) carry
// the rotor's. Each roller meets the floor through a contact pair of
// MuJoCo's elliptic friction cone with friction LateralFriction along its
// axis and Friction across it: MuJoCo orients a plane–capsule contact's
// first tangent along the capsule's axis, so the friction is anisotropic
// with the track's heading, not the world's. The pair is as stiff as the
// step allows (solref twice the timestep).
//
// The springs are there because MuJoCo's soft contacts, sliding, trade
// normal force against friction: with the rollers fixed to the body it hops
// off the floor while it turns in place (no contact in a third of the
// steps), the sliding rollers carry most of the load, and it turned at
// 1.2–1.4 rad/s where a Coulomb patch of the same points turns at 1.9
// (μ = 0.5 both ways). On springs each roller's mean load is its share of
// the weight, as in the Go model; the lighter the rollers the closer the
// two agree (docs/sim.md).
//
// The motors' torque and the rolling resistance (Rolling, which is not a
// contact force here) are applied by the caller as generalised forces.
func (t *Tracks) MJCF(timestep float64) string {
	p := t.p
	n := float64(t.nPts)
	k := t.load / mjcfRollerDeflection
	c := 2 * math.Sqrt(k*mjcfRollerMass)
	yawInertia := p.YawInertia // less the rollers'
	var rollers, pairs, eqs strings.Builder
	for s, side := range []string{"left", "right"} {
		y := p.Gauge / 2
		if s == Right {
			y = -y
		}
		for i, x := range t.points[:t.nPts] {
			yawInertia -= mjcfRollerMass * (x*x + y*y)
			name := fmt.Sprintf("%s_roller_%d", side, i)
			fmt.Fprintf(&rollers, `
      <body name="%s" pos="%g %g 0">
        <joint name="%s_spring" type="slide" axis="0 0 1" stiffness="%g" damping="%g"/>
        <joint name="%s" type="hinge" axis="0 1 0" armature="%g"/>
        <geom name="%s" type="capsule" size="%g %g" zaxis="0 1 0" mass="%g" contype="0" conaffinity="0"/>
      </body>`, name, x, y, name, k, c, name, p.TrackInertia/n, name, p.SprocketRadius, mjcfRollerHalfWidth, mjcfRollerMass)
			fmt.Fprintf(&pairs, `
    <pair geom1="floor" geom2="%s" condim="3" friction="%g %g 1e-5 1e-5 1e-5" solref="%g 1"/>`,
				name, p.LateralFriction, p.Friction, 2*timestep)
			fmt.Fprintf(&eqs, `
    <joint joint1="%s" joint2="motor_%s" polycoef="0 %g 0 0 0" solref="%g 1" solimp="0.99 0.99 0.001"/>`,
				name, side, 1/p.GearRatio, 2*timestep)
		}
	}
	motor := func(name string) string {
		return fmt.Sprintf(`<body name="%s"><joint name="%s" type="hinge" axis="0 1 0"/><inertial pos="0 0 0" mass="1e-3" diaginertia="%g %g %g"/></body>`,
			name, name, p.Motor.J, p.Motor.J, p.Motor.J)
	}
	return fmt.Sprintf(`<mujoco model="tracks">
  <compiler angle="radian"/>
  <option timestep="%g" integrator="Euler" cone="elliptic" gravity="0 0 %g"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" contype="0" conaffinity="0"/>
    <body name="base" pos="0 0 %g">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="y" type="slide" axis="0 1 0"/>
      <joint name="yaw" type="hinge" axis="0 0 1"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="%g" diaginertia="%g %g %g"/>%s
    </body>
    %s
    %s
  </worldbody>
  <contact>%s
  </contact>
  <equality>%s
  </equality>
</mujoco>
`, timestep, -StandardGravity, p.SprocketRadius, p.Mass-2*n*mjcfRollerMass, p.YawInertia, p.YawInertia, yawInertia,
		rollers.String(), motor("motor_left"), motor("motor_right"), pairs.String(), eqs.String())
}
