package kinematics

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"gonum.org/v1/gonum/mat"
)

// NumJoints is the number of an arm's joints.
const NumJoints = 5

// Arm is an arm's geometry and joint limits.
type Arm struct {
	Mount        mgl64.Vec3         // shoulder, robot frame, m
	Links        [NumJoints]float64 // link lengths from the shoulder out, m
	Lower, Upper [NumJoints]float64 // joint limits, rad
}

// DefaultArm returns the geometry and limits of the robot's arms
// (docs/sim.md): side "left" mounted at +y, "right" at −y, 0.45 m up;
// joints ±150°, shoulder_lift ±100°.
func DefaultArm(side string) Arm {
	y := 0.22
	if side == "right" {
		y = -y
	}
	const j, lift = 150 * math.Pi / 180, 100 * math.Pi / 180
	return Arm{
		Mount: mgl64.Vec3{0, y, 0.45}, Links: [NumJoints]float64{0.05, 0.25, 0.22, 0.06, 0.10},
		Lower: [NumJoints]float64{-j, -lift, -j, -j, -j}, Upper: [NumJoints]float64{j, lift, j, j, j},
	}
}

// Pose is the gripper's position (its fingers' centre, m) and orientation
// in the robot frame.
type Pose struct {
	Position mgl64.Vec3
	Rotation mgl64.Mat3
}

// joint returns joint i's rotation for angle q.
func joint(i int, q float64) mgl64.Mat3 {
	switch i {
	case 0:
		return mgl64.Rotate3DZ(q)
	case NumJoints - 1:
		return mgl64.Rotate3DX(q)
	default:
		return mgl64.Rotate3DY(q)
	}
}

// localAxis is joint i's axis in the frame before it turns.
func localAxis(i int) mgl64.Vec3 {
	switch i {
	case 0:
		return mgl64.Vec3{0, 0, 1}
	case NumJoints - 1:
		return mgl64.Vec3{1, 0, 0}
	default:
		return mgl64.Vec3{0, 1, 0}
	}
}

// frames computes, for joint angles q (missing ones 0), the joints'
// origins and axes and the gripper's pose.
func (a Arm) frames(q []float64) (origins [NumJoints + 1]mgl64.Vec3, axes [NumJoints]mgl64.Vec3, tip Pose) {
	r := mgl64.Ident3()
	p := a.Mount
	for i := 0; i < NumJoints; i++ {
		var qi float64
		if i < len(q) {
			qi = q[i]
		}
		origins[i] = p
		axes[i] = r.Mul3x1(localAxis(i))
		r = r.Mul3(joint(i, qi))
		d := mgl64.Vec3{1, 0, 0}
		if i == 0 {
			d = mgl64.Vec3{0, 0, 1}
		}
		p = p.Add(r.Mul3x1(d).Mul(a.Links[i]))
	}
	origins[NumJoints] = p
	return origins, axes, Pose{Position: p, Rotation: r}
}

// Chain returns the joint origins and the gripper's centre (six points,
// robot frame) for joint angles q (missing joints are 0).
func (a Arm) Chain(q []float64) [NumJoints + 1]mgl64.Vec3 {
	o, _, _ := a.frames(q)
	return o
}

// Forward returns the gripper's pose for joint angles q.
func (a Arm) Forward(q []float64) Pose {
	_, _, t := a.frames(q)
	return t
}

// Reach is the distance from the shoulder_lift axis to the fingers with the
// arm straight, m.
func (a Arm) Reach() float64 {
	var r float64
	for _, l := range a.Links[1:] {
		r += l
	}
	return r
}

// Options tune Inverse; zero values take the defaults.
type Options struct {
	Damping              float64 // λ of the damped least squares, default 0.05
	MaxIterations        int     // default 300
	PositionTolerance    float64 // m, default 1e-4
	OrientationTolerance float64 // rad, default 1e-3; negative: position only
	OrientationWeight    float64 // m per rad in the error, default 0.2
}

func (o Options) withDefaults() Options {
	if !(o.Damping > 0) {
		o.Damping = 0.05
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = 300
	}
	if !(o.PositionTolerance > 0) {
		o.PositionTolerance = 1e-4
	}
	if o.OrientationTolerance == 0 || math.IsNaN(o.OrientationTolerance) {
		o.OrientationTolerance = 1e-3
	}
	if !(o.OrientationWeight > 0) {
		o.OrientationWeight = 0.2
	}
	return o
}

// UnreachableError is returned when no joint angles within the limits put
// the gripper at the pose: the best found, and how far off it stays.
type UnreachableError struct {
	Joints           []float64 // the closest joint angles found, rad
	PositionError    float64   // m
	OrientationError float64   // rad (0 when only the position was asked for)
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("kinematics: pose unreachable within the joint limits: the closest pose is %.4f m from the position and %.4f rad from the orientation",
		e.PositionError, e.OrientationError)
}

// rotationError is the rotation vector (axis·angle, rad) that turns cur
// into want.
func rotationError(want, cur mgl64.Mat3) mgl64.Vec3 {
	q := mgl64.Mat4ToQuat(want.Mat4()).Mul(mgl64.Mat4ToQuat(cur.Mat4()).Conjugate()).Normalize()
	if q.W < 0 {
		q = q.Scale(-1)
	}
	s := q.V.Len()
	if s < 1e-12 {
		return q.V.Mul(2)
	}
	angle := 2 * math.Atan2(s, q.W)
	return q.V.Mul(angle / s)
}

// Inverse returns joint angles within the limits that put the gripper at
// target, starting the search from seed (the present angles; nil or short:
// zeros). With opts.OrientationTolerance negative only the position
// counts. A five-joint arm cannot reach every orientation: a pose it
// cannot reach returns *UnreachableError with the closest angles found.
func (a Arm) Inverse(target Pose, seed []float64, opts Options) ([]float64, error) {
	if err := finite(target, opts.OrientationTolerance < 0); err != nil {
		return nil, err
	}
	for i, v := range seed {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("kinematics: seed joint %d is %v, want a finite angle", i, v)
		}
	}
	o := opts.withDefaults()
	posOnly := o.OrientationTolerance < 0
	rows := 6
	if posOnly {
		rows = 3
	}
	q := make([]float64, NumJoints)
	copy(q, seed)
	for i := range q {
		q[i] = clamp(q[i], a.Lower[i], a.Upper[i])
	}
	jac := mat.NewDense(rows, NumJoints, nil)
	jjt := mat.NewSymDense(rows, nil)
	e := mat.NewVecDense(rows, nil)
	y := mat.NewVecDense(rows, nil)
	dq := mat.NewVecDense(NumJoints, nil)
	var chol mat.Cholesky
	best := append([]float64(nil), q...)
	bestCost := math.Inf(1)
	var bestPos, bestRot float64
	stalled := 0
	for iter := 0; iter < o.MaxIterations && stalled < stallIterations; iter++ {
		origins, axes, tip := a.frames(q)
		dp := target.Position.Sub(tip.Position)
		var dr mgl64.Vec3
		if !posOnly {
			dr = rotationError(target.Rotation, tip.Rotation)
		}
		posErr, rotErr := dp.Len(), dr.Len()
		cost := posErr + o.OrientationWeight*rotErr
		if cost < bestCost-stallProgress {
			stalled = 0
		} else {
			stalled++
		}
		if cost < bestCost {
			bestCost, bestPos, bestRot = cost, posErr, rotErr
			copy(best, q)
		}
		if posErr <= o.PositionTolerance && (posOnly || rotErr <= o.OrientationTolerance) {
			return q, nil
		}
		for i := 0; i < NumJoints; i++ {
			lin := axes[i].Cross(tip.Position.Sub(origins[i]))
			for k := 0; k < 3; k++ {
				jac.Set(k, i, lin[k])
				if !posOnly {
					jac.Set(3+k, i, o.OrientationWeight*axes[i][k])
				}
			}
		}
		// Each step aims at most maxStep (weighted metres) along the error,
		// as in clamped damped least squares (Buss and Kim): a target far
		// out of reach otherwise asks steps the linearisation cannot take,
		// and the arm never settles stretched towards it.
		scale := 1.0
		if n := math.Hypot(posErr, o.OrientationWeight*rotErr); n > maxStep {
			scale = maxStep / n
		}
		for k := 0; k < 3; k++ {
			e.SetVec(k, scale*dp[k])
			if !posOnly {
				e.SetVec(3+k, scale*o.OrientationWeight*dr[k])
			}
		}
		// Δq = Jᵀ·(J·Jᵀ + λ²·I)⁻¹·e
		jjt.SymOuterK(1, jac)
		for k := 0; k < rows; k++ {
			jjt.SetSym(k, k, jjt.At(k, k)+o.Damping*o.Damping)
		}
		if !chol.Factorize(jjt) {
			break
		}
		if err := chol.SolveVecTo(y, e); err != nil {
			break
		}
		dq.MulVec(jac.T(), y)
		for i := range q {
			q[i] = clamp(q[i]+dq.AtVec(i), a.Lower[i], a.Upper[i])
		}
	}
	if posOnly {
		bestRot = 0
	}
	return nil, &UnreachableError{Joints: best, PositionError: bestPos, OrientationError: bestRot}
}

// maxStep bounds the task-space error one step of Inverse aims to remove,
// weighted metres.
const maxStep = 0.05

// Inverse gives up once stallIterations iterations in a row have not
// brought the closest pose stallProgress (weighted metres) closer: the arm
// is as close as it gets to a pose out of reach, and a pose target held
// there is solved every router tick.
const (
	stallIterations = 10
	stallProgress   = 1e-7
)

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// ErrBadTarget is wrapped by the error for a target with non-finite
// numbers or a rotation that is not one.
var ErrBadTarget = errors.New("kinematics: bad target pose")

func finite(p Pose, positionOnly bool) error {
	for i, v := range p.Position {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: position[%d] is %v, want a finite number of metres", ErrBadTarget, i, v)
		}
	}
	if positionOnly {
		return nil
	}
	for i, v := range p.Rotation {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: rotation element %d is %v, want a finite number", ErrBadTarget, i, v)
		}
	}
	if d := p.Rotation.Det(); math.Abs(d-1) > 1e-6 {
		return fmt.Errorf("%w: rotation has determinant %.6g, want a rotation matrix (determinant 1)", ErrBadTarget, d)
	}
	return nil
}

// WithLimits returns the arm with joint limits lower and upper (rad, one
// per joint, as a joint table's lower and upper lists).
func (a Arm) WithLimits(lower, upper []float64) (Arm, error) {
	if len(lower) != NumJoints || len(upper) != NumJoints {
		return a, fmt.Errorf("kinematics: want %d lower and %d upper joint limits, got %d and %d", NumJoints, NumJoints, len(lower), len(upper))
	}
	for i := range lower {
		if !(lower[i] < upper[i]) {
			return a, fmt.Errorf("kinematics: joint %d: lower limit %g is not below upper limit %g", i, lower[i], upper[i])
		}
		a.Lower[i], a.Upper[i] = lower[i], upper[i]
	}
	return a, nil
}

// ArmJointNames are an arm's joints in chain order, as its joints.yaml names
// them (a robot configuration may prefix them: left_shoulder_pan).
func ArmJointNames() []string {
	return []string{"shoulder_pan", "shoulder_lift", "elbow", "wrist_pitch", "wrist_roll"}
}

// OrderArm picks an arm's joint angles in chain order out of joint_states
// (names and positions): each joint by its name, bare or with a prefix
// ("left_elbow"), 0 for one missing.
func OrderArm(names []string, positions []float64) [NumJoints]float64 {
	var q [NumJoints]float64
	for i, want := range ArmJointNames() {
		for k, n := range names {
			if k < len(positions) && (n == want || strings.HasSuffix(n, "_"+want)) {
				q[i] = positions[k]
				break
			}
		}
	}
	return q
}

// HeadMount is where the reference robot's head sits (its pan, tilt and
// roll axes meet), robot frame, m: on the torso, above the arms' mounts.
// The head's physics does not depend on it; it places the head in
// drawings.
func HeadMount() mgl64.Vec3 { return mgl64.Vec3{0, 0, 0.60} }

// HeadFacing is where the head's face points (robot frame, unit) at pan
// and tilt (rad): pan about z, positive turning left, then tilt about the
// head's y, positive looking down (the pitch of the robot frame's
// convention, as the head's physics model has it).
func HeadFacing(pan, tilt float64) mgl64.Vec3 {
	return mgl64.Vec3{math.Cos(pan) * math.Cos(tilt), math.Sin(pan) * math.Cos(tilt), -math.Sin(tilt)}
}

// TrackedBase is the reference robot's tracked base: what the simulator's
// physics (sim/model/tracks) and the robot's URDF model (ros2/urdf) take
// its size from.
type TrackedBase struct {
	Gauge          float64 // between the tracks' centres, m
	SprocketRadius float64 // the drive sprockets', m
	ContactLength  float64 // each track's patch on the floor, m
	Length, Width  float64 // the hull's footprint, m
}

// DefaultTrackedBase returns the reference robot's base: tracks 0.40 m
// apart on 0.05 m sprockets, 0.45 m of each on the floor, a 0.6 × 0.45 m
// hull. The robot frame's origin is on the floor midway between the
// tracks' patches.
func DefaultTrackedBase() TrackedBase {
	return TrackedBase{Gauge: 0.40, SprocketRadius: 0.05, ContactLength: 0.45, Length: 0.6, Width: 0.45}
}
