package arm

import (
	"math"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/ode"
	"github.com/saint-os/saint/sim/model/servo"
)

// StandardGravity is g₀, m/s².
const StandardGravity = 9.80665

// Joints of an arm, from the shoulder out.
const (
	ShoulderPan = iota
	ShoulderLift
	Elbow
	WristPitch
	WristRoll
	NumJoints
)

// JointName returns the name the arms role configuration gives joint i,
// or "" for no joint.
func JointName(i int) string {
	names := [NumJoints]string{"shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll"}
	if i < 0 || i >= NumJoints {
		return ""
	}
	return names[i]
}

// Joint describes one joint's actuator and friction.
type Joint struct {
	Servo    servo.Params
	Friction float64 // viscous, N·m·s/rad
	Coulomb  float64 // N·m
}

// Link is a rigid link from one joint to the next: a rod of Mass and
// Length, a capsule of Radius for collisions.
type Link struct {
	Length, Mass, Radius float64 // m, kg, m
}

// Gripper describes the gripper.
type Gripper struct {
	Servo       servo.Params
	FingerLever float64 // r_g, m
	MaxGap      float64 // m between the fingers fully open
	Stiffness   float64 // k of a held object, N/m
}

// Params describe one arm.
type Params struct {
	Side    string    // "left" or "right"
	Mount   geom.Vec3 // shoulder position in the robot frame, m
	Joints  [NumJoints]Joint
	Links   [NumJoints]Link // link i follows joint i
	Gripper Gripper
	Torso   geom.Capsule // the body the arm must not hit

	// DiagonalInertia selects the older approximation: each joint a
	// servo loaded by the mass matrix's diagonal and gravity alone, no
	// coupling between joints. It is kept so the oracle tests can say
	// what it neglects; the default is the full rigid-body dynamics.
	DiagonalInertia bool
}

// Default returns the arm described in the package doc for side "left"
// (mounted at +y) or "right" (−y).
func Default(side string) Params {
	y := 0.22
	if side == msg.ArmRight {
		y = -y
	}
	sts := func(kgcm, secPer60 float64) servo.Params {
		p := servo.STS3215()
		p.StallTorque = kgcm * 0.0980665
		p.NoLoadSpeed = math.Pi / 3 / secPer60
		p.MinAngle, p.MaxAngle = -150*math.Pi/180, 150*math.Pi/180
		return p
	}
	shoulder, elbow, wrist := sts(50, 0.19), sts(30, 0.17), sts(19.5, 0.222)
	j := func(p servo.Params) Joint { return Joint{Servo: p, Friction: 0.02, Coulomb: 0.05} }
	lift := shoulder
	lift.MinAngle, lift.MaxAngle = -100*math.Pi/180, 100*math.Pi/180
	grip := wrist
	lever, maxGap := 0.03, 0.08
	span := maxGap / (2 * lever)
	grip.Travel, grip.MinAngle, grip.MaxAngle = span, -span/2, span/2
	return Params{
		Side:  side,
		Mount: geom.Vec3{0, y, 0.45},
		Joints: [NumJoints]Joint{
			j(shoulder), j(lift), j(elbow), j(wrist), j(wrist),
		},
		Links: [NumJoints]Link{
			{0.05, 0.2, 0.05}, {0.25, 0.4, 0.04}, {0.22, 0.3, 0.035}, {0.06, 0.15, 0.03}, {0.10, 0.25, 0.035},
		},
		Gripper: Gripper{Servo: grip, FingerLever: lever, MaxGap: maxGap, Stiffness: 2000},
		Torso:   geom.Capsule{A: geom.Vec3{0, 0, 0.15}, B: geom.Vec3{0, 0, 0.75}, Radius: 0.12},
	}
}

// Arm is one arm.
type Arm struct {
	p       Params
	joints  [NumJoints]*servo.Servo
	gripper *servo.Servo

	objWidth, objMass float64 // held object (width 0: none)
	graspForce        float64

	// Kinematics of the present pose.
	origin  [NumJoints + 1]geom.Vec3 // joint origins and the fingers' centre
	axis    [NumJoints]geom.Vec3
	dir     [NumJoints]geom.Vec3 // unit direction of each link
	capsule [NumJoints]geom.Capsule

	posed [NumJoints]float64 // joint angles the kinematics above are for
	fresh bool
	pose  uint64       // counts the poses forward computed: a new value, a new pose
	box   [2]geom.Vec3 // bounds of the capsules (min, max), m

	// Gravity and inertia on each joint for pose loadPose (and the held
	// object's mass and grip then): they change only when the arm moves.
	loadPose   uint64
	loadObj    float64
	loadHeld   bool
	loadsValid bool
	inertia    [NumJoints]float64
	gravity    [NumJoints]float64

	collidedPose uint64 // pose collide last checked
	pair         pairCheck

	groundHit, selfHit, otherHit bool

	dyn dynamics // the joints' rigid-body dynamics
}

// New returns an arm at rest with the upper arm hanging (shoulder_lift 90°)
// and the forearm forward (elbow −90°), gripper half open, every servo
// holding that pose as a smart servo does when powered. Invalid geometry
// takes Default's.
func New(p Params) *Arm {
	if !validGeometry(p) {
		d := Default(p.Side)
		p.Links, p.Gripper.FingerLever, p.Gripper.MaxGap, p.Gripper.Stiffness = d.Links, d.Gripper.FingerLever, d.Gripper.MaxGap, d.Gripper.Stiffness
		p.Mount = d.Mount
	}
	a := &Arm{p: p, gripper: servo.New(p.Gripper.Servo)}
	for i := range a.joints {
		a.joints[i] = servo.New(p.Joints[i].Servo)
	}
	a.dyn.init(a)
	a.joints[ShoulderLift].SetAngle(math.Pi / 2)
	a.joints[Elbow].SetAngle(-math.Pi / 2)
	for _, j := range a.joints {
		j.SetGoal(j.Angle())
	}
	a.gripper.SetGoal(0)
	a.forward()
	a.collide()
	return a
}

func validGeometry(p Params) bool {
	for _, l := range p.Links {
		if !ode.Finite(l.Length, l.Mass, l.Radius) || l.Length < 0 || l.Mass < 0 || l.Radius < 0 {
			return false
		}
	}
	g := p.Gripper
	return ode.Finite(p.Mount[0], p.Mount[1], p.Mount[2], g.FingerLever, g.MaxGap, g.Stiffness) &&
		g.FingerLever > 0 && g.MaxGap > 0 && g.Stiffness > 0
}

// Name implements world.Model: "arm_left" or "arm_right".
func (a *Arm) Name() string { return "arm_" + a.p.Side }

// Params returns the arm's parameters.
func (a *Arm) Params() Params { return a.p }

// Joint returns joint i's servo.
func (a *Arm) Joint(i int) *servo.Servo { return a.joints[i] }

// Gripper returns the gripper's servo.
func (a *Arm) Gripper() *servo.Servo { return a.gripper }

// SetGripperOpening commands the gripper: 0 closed to 1 open (as
// msg.GripperCommand's position).
func (a *Arm) SetGripperOpening(frac float64) {
	if ode.Finite(frac) {
		lo, hi := a.gripper.Limits()
		a.gripper.SetGoal(lo + ode.Clamp(frac, 0, 1)*(hi-lo))
	}
}

// SetGripForce limits the grasp force (N), through the gripper servo's
// torque limit; 0 or less means the servo's full torque.
func (a *Arm) SetGripForce(newtons float64) {
	if !ode.Finite(newtons) {
		return
	}
	maxF := a.MaxGripForce()
	if newtons <= 0 || newtons >= maxF {
		a.gripper.SetTorqueLimit(1)
		return
	}
	a.gripper.SetTorqueLimit(newtons / maxF)
}

// MaxGripForce is the grasp force at the gripper servo's stall torque, N.
func (a *Arm) MaxGripForce() float64 {
	return a.gripper.Params().StallTorque / (2 * a.p.Gripper.FingerLever)
}

// Grasp puts an object of width (m) and mass (kg) between the fingers;
// width 0 removes it. It is held once the fingers close on it.
func (a *Arm) Grasp(width, mass float64) {
	if !ode.Finite(width, mass) || width <= 0 {
		a.objWidth, a.objMass = 0, 0
		return
	}
	a.objWidth, a.objMass = math.Min(width, a.p.Gripper.MaxGap), math.Max(mass, 0)
}

// GripperGap returns the distance between the fingers, m.
func (a *Arm) GripperGap() float64 {
	return a.p.Gripper.MaxGap/2 + 2*a.p.Gripper.FingerLever*a.gripper.Angle()
}

// GraspForce returns the force on a held object, N.
func (a *Arm) GraspForce() float64 { return a.graspForce }

// Holding reports whether the fingers squeeze an object.
func (a *Arm) Holding() bool { return a.graspForce > 0 }

// SetDead kills (true) or revives every servo of the arm.
func (a *Arm) SetDead(dead bool) {
	for _, s := range a.joints {
		s.SetDead(dead)
	}
	a.gripper.SetDead(dead)
}

// PoseTolerance is how far (rad) every joint may move before the arm's
// kinematics, loads and collisions are computed again. A servo holding
// against gravity creeps by a few ulp per step for ever, one sagging or
// settling on its goal by milliradians per second; 1e-5 rad is 7 µm at
// 0.7 m of reach, a 150th of a Feetech position step, and changes the
// gravity torques by a hundred-thousandth.
const PoseTolerance = 1e-5

// forward computes the present pose's joint origins, axes and capsules,
// unless no joint has moved by more than PoseTolerance since it last did.
func (a *Arm) forward() {
	if a.fresh {
		same := true
		for i, s := range a.joints {
			if math.Abs(s.Angle()-a.posed[i]) > PoseTolerance || math.IsNaN(s.Angle()) {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	for i, s := range a.joints {
		a.posed[i] = s.Angle()
	}
	a.fresh = true
	a.pose++
	r := geom.Identity()
	p := a.p.Mount
	local := [NumJoints]geom.Vec3{{0, 0, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {1, 0, 0}}
	for i := 0; i < NumJoints; i++ {
		q := a.joints[i].Angle()
		a.origin[i] = p
		a.axis[i] = r.Apply(local[i])
		switch i {
		case ShoulderPan:
			r = r.Mul(geom.RotZ(q))
		case WristRoll:
			r = r.Mul(geom.RotX(q))
		default:
			r = r.Mul(geom.RotY(q))
		}
		d := geom.Vec3{1, 0, 0}
		if i == ShoulderPan {
			d = geom.Vec3{0, 0, 1}
		}
		a.dir[i] = r.Apply(d)
		next := p.Add(a.dir[i].Scale(a.p.Links[i].Length))
		a.capsule[i] = geom.Capsule{A: p, B: next, Radius: a.p.Links[i].Radius}
		p = next
	}
	a.origin[NumJoints] = p
	a.box = bounds(a.capsule[:])
}

// bounds returns the axis-aligned box (min, max) around capsules.
func bounds(cs []geom.Capsule) [2]geom.Vec3 {
	inf := math.Inf(1)
	b := [2]geom.Vec3{{inf, inf, inf}, {-inf, -inf, -inf}}
	for _, c := range cs {
		for k := 0; k < 3; k++ {
			b[0][k] = math.Min(b[0][k], math.Min(c.A[k], c.B[k])-c.Radius)
			b[1][k] = math.Max(b[1][k], math.Max(c.A[k], c.B[k])+c.Radius)
		}
	}
	return b
}

// overlap reports whether two boxes from bounds overlap.
func overlap(a, b [2]geom.Vec3) bool {
	return a[0][0] <= b[1][0] && b[0][0] <= a[1][0] &&
		a[0][1] <= b[1][1] && b[0][1] <= a[1][1] &&
		a[0][2] <= b[1][2] && b[0][2] <= a[1][2]
}

// Step implements world.Model.
func (a *Arm) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	a.forward()
	if a.p.DiagonalInertia {
		a.loads()
		for i := 0; i < NumJoints; i++ {
			j := a.p.Joints[i]
			s := a.joints[i]
			tau := a.gravity[i] - j.Coulomb*math.Tanh(s.Rate()/0.01)
			s.Step(dt, a.inertia[i], j.Friction, tau)
		}
	} else {
		a.stepRigid(dt)
	}
	a.stepGripper(dt)
	a.forward()
	a.collide()
}

// loads computes each joint's inertia and gravity torque for the present
// pose, unless the arm has not moved (nor grasped or let go) since.
func (a *Arm) loads() {
	held := a.objMass > 0 && a.Holding()
	if a.loadsValid && a.loadPose == a.pose && a.loadObj == a.objMass && a.loadHeld == held {
		return
	}
	a.loadsValid, a.loadPose, a.loadObj, a.loadHeld = true, a.pose, a.objMass, held
	g := geom.Vec3{0, 0, -StandardGravity}
	tip := a.origin[NumJoints]
	for i := 0; i < NumJoints; i++ {
		var inertia, tau float64
		for k := i; k < NumJoints; k++ {
			l := a.p.Links[k]
			c := a.capsule[k].A.Add(a.capsule[k].B).Scale(0.5)
			lever := a.axis[i].Cross(c.Sub(a.origin[i]))
			inertia += l.Mass * lever.Dot(lever)
			along := a.axis[i].Dot(a.dir[k])
			inertia += cylinderPerp(l)*(1-along*along) + l.Mass*l.Radius*l.Radius/2*along*along
			tau += lever.Dot(g.Scale(l.Mass))
		}
		if held {
			lever := a.axis[i].Cross(tip.Sub(a.origin[i]))
			inertia += a.objMass * lever.Dot(lever)
			tau += lever.Dot(g.Scale(a.objMass))
		}
		a.inertia[i], a.gravity[i] = inertia, tau
	}
}

// The finger mechanism's inertia at the gripper servo (kg·m²) and its
// viscous friction (N·m·s/rad).
const (
	gripperInertia  = 1e-5
	GripperFriction = 0.01
)

func (a *Arm) stepGripper(dt float64) {
	gp := a.p.Gripper
	var ext float64
	a.graspForce = 0
	if a.objWidth > 0 {
		if gap := a.GripperGap(); gap < a.objWidth {
			a.graspForce = gp.Stiffness * (a.objWidth - gap)
			ext = 2 * a.graspForce * gp.FingerLever
		}
	}
	a.gripper.Step(dt, gripperInertia, GripperFriction, ext)
	if a.objWidth > 0 {
		if gap := a.GripperGap(); gap < a.objWidth {
			a.graspForce = gp.Stiffness * (a.objWidth - gap)
		} else {
			a.graspForce = 0
		}
	}
}

// collide checks the present pose against the floor, the arm itself and
// the torso. A pose already checked is not checked again: an arm holding
// still costs nothing here.
func (a *Arm) collide() {
	if a.collidedPose == a.pose {
		return
	}
	a.collidedPose = a.pose
	a.groundHit, a.selfHit = false, false
	torso := a.p.Torso
	nearTorso := overlap(a.box, bounds([]geom.Capsule{torso}))
	for i, c := range a.capsule {
		if c.Radius == 0 && c.A == c.B {
			continue
		}
		if c.BelowZ(0) {
			a.groundHit = true
		}
		if i > 0 && nearTorso && c.Touches(torso) {
			a.selfHit = true
		}
		for k := i + 2; k < NumJoints; k++ {
			// Links either side of one too short to separate them (the
			// wrist) always touch: that is the joint, not a collision.
			if k == i+2 && a.p.Links[i+1].Length < c.Radius+a.capsule[k].Radius {
				continue
			}
			if touches(c, a.capsule[k], a.p.Links[i].Length, a.p.Links[k].Length) {
				a.selfHit = true
			}
		}
	}
}

// touches is geom.Capsule.Touches with the links' lengths known, so the
// bounding-sphere rejection needs no square roots.
func touches(c, d geom.Capsule, lenC, lenD float64) bool {
	reach := (lenC+lenD)/2 + c.Radius + d.Radius
	if gap := c.A.Add(c.B).Sub(d.A.Add(d.B)).Scale(0.5); gap.Dot(gap) >= reach*reach {
		return false
	}
	return geom.SegmentDistance(c.A, c.B, d.A, d.B) < c.Radius+d.Radius
}

// CheckPair checks the two arms against each other and records the result
// on both (OtherArmHit); it reports whether they touch.
// The check is skipped when neither arm has moved since the last check of
// the same pair, and rejected whole when the arms' bounding boxes are
// apart.
func CheckPair(a, b *Arm) bool {
	if p := a.pair; p.other == b && p.pose == a.pose && p.otherPose == b.pose {
		a.otherHit, b.otherHit = p.hit, p.hit
		return p.hit
	}
	hit := false
	if overlap(a.box, b.box) {
		for i, c := range a.capsule {
			for k, d := range b.capsule {
				if touches(c, d, a.p.Links[i].Length, b.p.Links[k].Length) {
					hit = true
				}
			}
		}
	}
	a.pair = pairCheck{other: b, pose: a.pose, otherPose: b.pose, hit: hit}
	a.otherHit, b.otherHit = hit, hit
	return hit
}

// pairCheck is the last CheckPair of an arm against another.
type pairCheck struct {
	other           *Arm
	pose, otherPose uint64
	hit             bool
}

// Positions returns the joint angles, rad.
func (a *Arm) Positions() []float64 {
	out := make([]float64, NumJoints)
	for i, s := range a.joints {
		out[i] = s.Angle()
	}
	return out
}

// Velocities returns the joint rates, rad/s.
func (a *Arm) Velocities() []float64 {
	out := make([]float64, NumJoints)
	for i, s := range a.joints {
		out[i] = s.Rate()
	}
	return out
}

// Efforts returns the joint servos' torques, N·m.
func (a *Arm) Efforts() []float64 {
	out := make([]float64, NumJoints)
	for i, s := range a.joints {
		out[i] = s.Torque()
	}
	return out
}

// Tip returns the fingers' centre in the robot frame, m.
func (a *Arm) Tip() geom.Vec3 { return a.origin[NumJoints] }

// Capsules returns the links' collision shapes.
func (a *Arm) Capsules() []geom.Capsule { return append([]geom.Capsule(nil), a.capsule[:]...) }

// GroundHit reports whether a link touches the floor.
func (a *Arm) GroundHit() bool { return a.groundHit }

// SelfHit reports whether two links of the arm, or a link and the torso, touch.
func (a *Arm) SelfHit() bool { return a.selfHit }

// OtherArmHit reports whether the arm touched the other arm at the last CheckPair.
func (a *Arm) OtherArmHit() bool { return a.otherHit }

// AppendState implements world.Stater.
func (a *Arm) AppendState(dst []float64) []float64 {
	for _, s := range a.joints {
		dst = append(dst, s.Angle(), s.Rate())
	}
	return append(dst, a.gripper.Angle(), a.gripper.Rate())
}

// Truth implements world.Truther.
func (a *Arm) Truth() any {
	t := msg.SimArm{
		Side: a.p.Side, Positions: a.Positions(), Velocities: a.Velocities(), Efforts: a.Efforts(),
		Gripper: a.GripperGap(), GraspForce: a.graspForce, Holding: a.Holding(), Tip: a.Tip(),
		GroundHit: a.groundHit, SelfHit: a.selfHit, OtherArmHit: a.otherHit,
	}
	for _, o := range a.origin[:NumJoints] {
		t.Joints = append(t.Joints, o)
	}
	return t
}
