package arm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/sim/model/geom"
)

const dt = 1e-3

func deg(d float64) float64 { return d * math.Pi / 180 }

func run(a *Arm, seconds float64) {
	for i := 0; i < int(seconds/dt+0.5); i++ {
		a.Step(dt)
	}
}

func pose(a *Arm, q ...float64) {
	for i, v := range q {
		a.Joint(i).SetAngle(v)
		a.Joint(i).SetGoal(v)
	}
}

// gravityTorque is the analytic static torque of gravity about the
// shoulder_lift axis for an arm held straight out at lift angle q: the sum
// of link weights times their horizontal distance from the shoulder.
func gravityTorque(p Params, q float64) float64 {
	tau, x := 0.0, 0.0
	for _, l := range p.Links[1:] {
		tau += l.Mass * StandardGravity * (x + l.Length/2) * math.Cos(q)
		x += l.Length
	}
	return tau
}

// Held straight out, the shoulder servo's effort balances gravity's
// torque — to within the joint's static friction, which carries the rest
// of the load once the arm sticks (TestStiction); hanging, the efforts are
// nil.
func TestGravityEfforts(t *testing.T) {
	a := New(Default(msg.ArmLeft))
	pose(a, 0, 0, 0, 0, 0)
	run(a, 2)
	q := a.Positions()[ShoulderLift]
	want := -gravityTorque(a.p, q)
	// 0.1 %: the elbow and wrist sag a little under their own loads.
	tol := a.p.Joints[ShoulderLift].Coulomb + 1e-3*math.Abs(want)
	if got := a.Efforts()[ShoulderLift]; math.Abs(got-want) > tol {
		t.Errorf("horizontal arm: shoulder effort %.4f N·m, gravity needs %.4f", got, want)
	}
	if q > deg(2) {
		t.Errorf("horizontal arm sagged %.2f°", q*180/math.Pi)
	}
	pose(a, 0, deg(90), 0, 0, 0)
	run(a, 1)
	for i, e := range a.Efforts() {
		if math.Abs(e) > 0.05 {
			t.Errorf("hanging arm: joint %s effort %.4f N·m, want ~0", JointName(i), e)
		}
	}
}

// Torque-limited below what holding it out takes, the arm sinks until
// gravity's torque, falling with cos q, meets the limit.
func TestTorqueLimit(t *testing.T) {
	a := New(Default(msg.ArmRight))
	pose(a, 0, 0, 0, 0, 0)
	s := a.Joint(ShoulderLift)
	full := gravityTorque(a.p, 0)
	limit := 0.5 * full
	s.SetTorqueLimit(limit / s.Params().StallTorque)
	run(a, 3)
	want := math.Acos(0.5)
	if q := a.Positions()[ShoulderLift]; math.Abs(q-want) > deg(1) {
		t.Errorf("limited shoulder settled at %.2f°, want %.2f°", q*180/math.Pi, want*180/math.Pi)
	}
	if e := a.Efforts()[ShoulderLift]; math.Abs(math.Abs(e)-limit) > 0.01*limit {
		t.Errorf("effort %.4f, want the limit %.4f", e, limit)
	}
}

// Closing on a 4 cm object with a 10 N force limit squeezes it with 10 N;
// without an object the fingers close fully.
func TestGrasp(t *testing.T) {
	a := New(Default(msg.ArmLeft))
	a.Grasp(0.04, 0.2)
	a.SetGripForce(10)
	a.SetGripperOpening(0)
	run(a, 1)
	if !a.Holding() || math.Abs(a.GraspForce()-10) > 0.2 {
		t.Errorf("grasp force %.3f N (holding %v), want 10 N", a.GraspForce(), a.Holding())
	}
	if gap := a.GripperGap(); gap > 0.04 || gap < 0.035 {
		t.Errorf("gap %.4f m on a 4 cm object", gap)
	}
	a.SetGripperOpening(1)
	run(a, 1)
	if a.Holding() || math.Abs(a.GripperGap()-a.p.Gripper.MaxGap) > 1e-3 {
		t.Errorf("opened: gap %.4f, holding %v", a.GripperGap(), a.Holding())
	}
	a.Grasp(0, 0)
	a.SetGripperOpening(0)
	run(a, 1)
	if a.GripperGap() > 1e-3 || a.GraspForce() != 0 {
		t.Errorf("closed on nothing: gap %.4f, force %.3f", a.GripperGap(), a.GraspForce())
	}
}

// Holding a heavy object out makes the shoulder work harder by its weight
// times the reach (to within the static friction either effort may leave
// to the joint).
func TestPayload(t *testing.T) {
	a := New(Default(msg.ArmLeft))
	pose(a, 0, 0, 0, 0, 0)
	a.SetGripperOpening(0)
	run(a, 2)
	e0 := a.Efforts()[ShoulderLift]
	a.SetGripperOpening(1)
	run(a, 0.5)
	a.Grasp(0.05, 0.1)
	a.SetGripperOpening(0)
	run(a, 2)
	reach := a.Tip()[0] - a.origin[ShoulderLift][0]
	// Each effort is within the joint's static friction of the load.
	tol := 2*a.p.Joints[ShoulderLift].Coulomb + 0.01*0.1*StandardGravity*reach
	if got, want := e0-a.Efforts()[ShoulderLift], 0.1*StandardGravity*reach; math.Abs(got-want) > tol {
		t.Errorf("0.1 kg at %.3f m added %.4f N·m, want %.4f", reach, got, want)
	}
}

// A settled arm is held by its servos' static friction: its joints stop
// dead (not creeping at 10⁻⁷ rad/s, nor chattering at a deadband's edge)
// with each servo's effort within the Coulomb friction of what holding the
// arm takes. Limp, the same arm falls: gravity's torque on the shoulder is
// far beyond the breakaway torque.
func TestStiction(t *testing.T) {
	a := New(Default(msg.ArmLeft))
	pose(a, 0, 0, deg(20), deg(-30), 0)
	run(a, 2)
	held := a.Positions()
	for i := 0; i < NumJoints; i++ {
		if w := a.Joint(i).Rate(); w != 0 {
			t.Errorf("settled arm: %s moves at %.3g rad/s", JointName(i), w)
		}
	}
	want := -gravityTorque(a.p, held[ShoulderLift])
	if e := a.Efforts()[ShoulderLift]; math.Abs(e-want) > a.p.Joints[ShoulderLift].Coulomb+0.05*math.Abs(want) {
		t.Errorf("settled arm: shoulder effort %.4f N·m, holding it takes about %.4f", e, want)
	}
	run(a, 1)
	for i, q := range a.Positions() {
		if q != held[i] {
			t.Errorf("held arm: %s moved by %.3g rad", JointName(i), q-held[i])
		}
	}
	for i := 0; i < NumJoints; i++ {
		a.Joint(i).SetTorqueEnabled(false)
	}
	run(a, 0.5)
	if fell := a.Positions()[ShoulderLift] - held[ShoulderLift]; fell < deg(20) {
		t.Errorf("limp arm: shoulder fell by only %.2f°", fell*180/math.Pi)
	}
}

func TestCollisions(t *testing.T) {
	a := New(Default(msg.ArmLeft))
	run(a, 0.1)
	if a.GroundHit() || a.SelfHit() {
		t.Errorf("rest pose: ground %v self %v", a.GroundHit(), a.SelfHit())
	}
	pose(a, 0, deg(90), 0, 0, 0) // hanging straight down reaches the floor
	a.Step(dt)
	if !a.GroundHit() {
		t.Errorf("straight down, tip at z = %.3f: no ground hit", a.Tip()[2])
	}
	pose(a, 0, 0, deg(-150), deg(-120), 0) // folded back onto itself
	a.Step(dt)
	if !a.SelfHit() {
		t.Error("folded arm: no self hit")
	}
	b := New(Default(msg.ArmRight))
	pose(a, deg(-90), 0, 0, 0, 0) // both reach across the chest
	pose(b, deg(90), 0, 0, 0, 0)
	a.Step(dt)
	b.Step(dt)
	if !CheckPair(a, b) || !a.OtherArmHit() || !b.OtherArmHit() {
		t.Error("crossed arms: no hit between them")
	}
	pose(a, 0, deg(90), deg(-90), 0, 0)
	pose(b, 0, deg(90), deg(-90), 0, 0)
	a.Step(dt)
	b.Step(dt)
	if CheckPair(a, b) || a.OtherArmHit() {
		t.Error("arms at rest touch each other")
	}
}

// The collision checks skip a pose already checked and reject far pairs by
// their bounding boxes; over random poses, held and moved, they give what
// checking every capsule pair gives.
func TestCollisionsMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := New(Default(msg.ArmLeft)), New(Default(msg.ArmRight))
	hits := map[string]int{}
	for range 400 {
		for _, arm := range []*Arm{a, b} {
			if rng.IntN(3) == 0 {
				continue // this arm holds its pose
			}
			for i := range NumJoints {
				lo, hi := arm.Joint(i).Limits()
				arm.Joint(i).SetAngle(lo + rng.Float64()*(hi-lo))
			}
		}
		a.Step(dt)
		b.Step(dt)
		other := CheckPair(a, b)
		ground, self := bruteSelf(a)
		if a.GroundHit() != ground || a.SelfHit() != self {
			t.Fatalf("pose %v: ground %v self %v, brute force %v %v", a.Positions(), a.GroundHit(), a.SelfHit(), ground, self)
		}
		if want := bruteOther(a, b); other != want || a.OtherArmHit() != want || b.OtherArmHit() != want {
			t.Fatalf("poses %v, %v: other arm %v, brute force %v", a.Positions(), b.Positions(), other, want)
		}
		hits[fmt3(ground, self, other)]++
	}
	if len(hits) < 3 {
		t.Errorf("random poses covered only %v", hits)
	}
}

func fmt3(a, b, c bool) string {
	s := ""
	for _, v := range []bool{a, b, c} {
		if v {
			s += "1"
		} else {
			s += "0"
		}
	}
	return s
}

func bruteSelf(a *Arm) (ground, self bool) {
	cs := a.Capsules()
	for i, c := range cs {
		if c.BelowZ(0) {
			ground = true
		}
		if i > 0 && geom.SegmentDistance(c.A, c.B, a.p.Torso.A, a.p.Torso.B) < c.Radius+a.p.Torso.Radius {
			self = true
		}
		for k := i + 2; k < NumJoints; k++ {
			if k == i+2 && a.p.Links[i+1].Length < c.Radius+cs[k].Radius {
				continue
			}
			if geom.SegmentDistance(c.A, c.B, cs[k].A, cs[k].B) < c.Radius+cs[k].Radius {
				self = true
			}
		}
	}
	return ground, self
}

func bruteOther(a, b *Arm) bool {
	for _, c := range a.Capsules() {
		for _, d := range b.Capsules() {
			if geom.SegmentDistance(c.A, c.B, d.A, d.B) < c.Radius+d.Radius {
				return true
			}
		}
	}
	return false
}

// Five joints plus a gripper, and the truth message carries them.
func TestTruth(t *testing.T) {
	a := New(Default(msg.ArmRight))
	tr := a.Truth().(msg.SimArm)
	if tr.Side != "right" || len(tr.Positions) != 5 || len(tr.Joints) != 5 || a.Name() != "arm_right" {
		t.Errorf("truth %+v", tr)
	}
	if a.Params().Mount[1] >= 0 {
		t.Error("right arm mounted on the left")
	}
}

func TestBadInput(t *testing.T) {
	p := Default(msg.ArmLeft)
	p.Links[2].Length = math.NaN()
	a := New(p)
	if a.Params().Links[2].Length != Default(msg.ArmLeft).Links[2].Length {
		t.Error("invalid link kept")
	}
	nan, inf := math.NaN(), math.Inf(1)
	a.SetGripperOpening(nan)
	a.SetGripForce(inf)
	a.SetGripForce(nan)
	a.Grasp(nan, 1)
	a.Grasp(1, inf)
	a.Joint(0).SetGoal(nan)
	a.Joint(1).SetPWM(nan, nan, true)
	a.Step(nan)
	a.Step(-1)
	run(a, 0.1)
	for _, v := range a.AppendState(nil) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("state not finite: %v", a.AppendState(nil))
		}
	}
}

func BenchmarkStep(b *testing.B) {
	a := New(Default(msg.ArmLeft))
	pose(a, 0.2, 0.3, -0.5, 0.2, 0.1)
	for i := 0; i < b.N; i++ {
		a.Step(dt)
	}
}

// BenchmarkStepMoving steps an arm that moves every step, so nothing is
// reused from the step before: the cost of an arm in motion.
func BenchmarkStepMoving(b *testing.B) {
	a, other := New(Default(msg.ArmLeft)), New(Default(msg.ArmRight))
	for i := range NumJoints {
		a.Joint(i).SetGoal(0.5)
	}
	for i := 0; i < b.N; i++ {
		if i%2000 == 0 {
			for k := range NumJoints {
				g, _ := a.Joint(k).Goal()
				a.Joint(k).SetGoal(-g)
			}
		}
		a.Step(dt)
		CheckPair(a, other)
	}
}

// The kinematics package (the arms role's and the visualizer's) places the
// joints and the fingers where the simulated arm has them.
func TestKinematicsPackageAgrees(t *testing.T) {
	for _, side := range []string{"left", "right"} {
		a := New(Default(side))
		for i, q := range []float64{0.4, 1.1, -0.8, 0.6, -1.2} {
			a.Joint(i).SetAngle(q)
		}
		a.Step(1e-3)
		k := kinematics.DefaultArm(side)
		chain := k.Chain(a.Positions())
		for i, o := range a.Truth().(msg.SimArm).Joints {
			if d := chain[i].Sub(mgl64.Vec3(o)).Len(); d > 1e-9 {
				t.Errorf("%s joint %d: kinematics %v, simulator %v", side, i, chain[i], o)
			}
		}
		if d := chain[NumJoints].Sub(mgl64.Vec3(a.Tip())).Len(); d > 1e-9 {
			t.Errorf("%s tip: kinematics %v, simulator %v", side, chain[NumJoints], a.Tip())
		}
		p := a.Params()
		for i := 0; i < NumJoints; i++ {
			lo, hi := a.Joint(i).Limits()
			if k.Lower[i] != lo || k.Upper[i] != hi || k.Links[i] != p.Links[i].Length {
				t.Errorf("%s joint %d: kinematics limits [%g, %g] length %g, simulator [%g, %g] %g",
					side, i, k.Lower[i], k.Upper[i], k.Links[i], lo, hi, p.Links[i].Length)
			}
		}
	}
}

// An arm in equilibrium is not integrated (holdRate, holdAccel), yet a new
// goal moves it at once, and holding changes the pose by less than the
// tolerance the skip states.
func TestHoldingThenMoving(t *testing.T) {
	a := New(Default("left"))
	for k := 0; k < 2000; k++ {
		a.Step(1e-3)
	}
	before := a.Positions()
	for k := 0; k < 1000; k++ {
		a.Step(1e-3)
	}
	for i, q := range a.Positions() {
		if d := math.Abs(q - before[i]); d > 1e-6 {
			t.Errorf("holding for 1 s moved joint %d by %g rad", i, d)
		}
	}
	a.Joint(Elbow).SetGoal(-1.0)
	a.Step(1e-3)
	if a.Velocities()[Elbow] == 0 {
		t.Fatal("a new elbow goal did not move the holding arm")
	}
	for k := 0; k < 1000; k++ {
		a.Step(1e-3)
	}
	if got := a.Positions()[Elbow]; math.Abs(got+1.0) > 0.02 {
		t.Fatalf("elbow at %g rad 1 s after a goal of −1 rad", got)
	}
}
