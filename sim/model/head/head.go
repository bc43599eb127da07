package head

import (
	"math"
	"math/rand/v2"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/ode"
	"github.com/saint-os/saint/sim/model/rigid"
	"github.com/saint-os/saint/sim/model/servo"
)

// StandardGravity is g₀, m/s².
const StandardGravity = 9.80665

// Axes of the head, the index of its servos.
const (
	Pan = iota
	Tilt
	Roll
)

// Axis describes one joint of the head.
type Axis struct {
	Servo    servo.Params
	Inertia  float64 // kg·m² about the axis, besides the servo's rotor
	Friction float64 // viscous, N·m·s/rad
}

// Params describe a head.
type Params struct {
	Axes          [3]Axis   // pan, tilt, roll
	GravityMoment float64   // m·g·d, N·m: the head's weight times its offset above the tilt/roll axes
	Mass          float64   // m, kg: the head on the tilt and roll axes (with GravityMoment it places the centre of mass)
	IMUOffset     geom.Vec3 // IMU position from the axes' intersection, head frame, m
	GyroNoise     float64   // rad/s, standard deviation per sample
	AccelNoise    float64   // m/s², standard deviation per sample
	GyroBias      float64   // rad/s, standard deviation of the constant bias
}

// Default is the head described in the package doc.
func Default() Params {
	axis := func(travelDeg, inertia float64) Axis {
		p := servo.MG996R()
		p.Travel = travelDeg * math.Pi / 180
		return Axis{Servo: p, Inertia: inertia, Friction: 0.01}
	}
	return Params{
		Axes:          [3]Axis{axis(360, 4e-3), axis(180, 4.6e-3), axis(90, 4.6e-3)},
		GravityMoment: 1.2 * StandardGravity * 0.04,
		Mass:          1.2,
		IMUOffset:     geom.Vec3{0.05, 0, 0.03},
		GyroNoise:     0.002, AccelNoise: 0.09, GyroBias: 0.01,
	}
}

// Head is the head model.
type Head struct {
	p      Params
	servos [3]*servo.Servo
	rng    *rand.Rand
	bias   geom.Vec3

	omega, alpha geom.Vec3 // angular velocity and acceleration, robot frame

	chain         *rigid.Chain // the three axes' rigid-body dynamics
	q, qd, tau, a []float64    // its workspace
	x             [6]float64   // angles and rates, integrated together
	rk            ode.RK4
	deriv         ode.Deriv

	// The trigonometry of the last pose seen, reused while the head holds
	// still (it does, mostly): the same inputs give the same numbers.
	kin headKinematics
	imu imuReading
}

// headKinematics is the angular velocity for angles a and rates r.
type headKinematics struct {
	valid bool
	a, r  [3]float64
	w     geom.Vec3
}

// imuReading is TrueIMU's answer for its inputs.
type imuReading struct {
	valid       bool
	in          [12]float64 // angles, rates, ω, α
	accel, gyro geom.Vec3
}

// same reports whether a and b hold the same bits (so NaN never matches
// and −0 does not match +0).
func same(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// New returns a head at rest, level and facing forward, with no command.
// With rng the IMU reading is noisy and biased; nil gives a perfect IMU.
func New(p Params, rng *rand.Rand) *Head {
	h := &Head{p: p, rng: rng}
	for i := range h.servos {
		h.servos[i] = servo.New(p.Axes[i].Servo)
	}
	h.chain = rigid.New(geom.Vec3{}, geom.Vec3{0, 0, -StandardGravity}, chainJoints(p))
	h.q, h.qd, h.tau, h.a = make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3)
	h.deriv = h.derivative
	if rng != nil {
		for i := range h.bias {
			h.bias[i] = p.GyroBias * rng.NormFloat64()
		}
	}
	return h
}

// Name implements world.Model.
func (h *Head) Name() string { return "head" }

// Servo returns the servo of axis Pan, Tilt or Roll.
func (h *Head) Servo(axis int) *servo.Servo { return h.servos[axis] }

// SetPWM commands axis from a PWM output (frequency Hz, duty 0–1, running).
func (h *Head) SetPWM(axis int, freqHz, duty float64, on bool) {
	h.servos[axis].SetPWM(freqHz, duty, on)
}

// SetDead kills (true) or revives every servo of the head.
func (h *Head) SetDead(dead bool) {
	for _, s := range h.servos {
		s.SetDead(dead)
	}
}

// maxSubstep bounds the integration substep, s: RK4 at 1 ms matches the
// oracle as closely as at 0.5 ms.
const maxSubstep = 1e-3

// A head within poseTolerance (rad) of the pose its dynamics were last
// computed for, every axis slower than restRate (rad/s), reuses them
// (rigid.Chain.UpdateNear), as a holding arm does.
const (
	poseTolerance = 1e-6
	restRate      = 1e-3
)

// A head whose axes are all slower than holdRate (rad/s) and accelerate
// less than holdAccel (rad/s²) is in equilibrium — servos holding, or limp
// and balanced level — and is not integrated: over a step it would move by
// less than 10⁻⁹ rad.
const (
	holdRate  = 1e-6
	holdAccel = 1e-3
)

// chainJoints describes the head as a rigid-body chain: pan (z), tilt (y)
// and roll (x) meeting at the origin, the head a body of Mass whose centre
// of mass sits GravityMoment/(Mass·g) above them, its inertia chosen so
// that, level, its moment about each axis is that axis's Inertia; each
// servo's rotor inertia is its joint's armature.
func chainJoints(p Params) []rigid.Joint {
	m := p.Mass
	if !(m > 0) || math.IsInf(m, 0) {
		m = Default().Mass
	}
	d := p.GravityMoment / (m * StandardGravity)
	if !ode.Finite(d) {
		d = 0
	}
	md2 := m * d * d
	pos := func(v float64) float64 { return math.Max(v, 1e-9) }
	in := geom.Mat3{{pos(p.Axes[Roll].Inertia - md2), 0, 0}, {0, pos(p.Axes[Tilt].Inertia - md2), 0}, {0, 0, pos(p.Axes[Pan].Inertia)}}
	return []rigid.Joint{
		{Axis: geom.Vec3{0, 0, 1}, Armature: p.Axes[Pan].Servo.RotorInertia},
		{Axis: geom.Vec3{0, 1, 0}, Armature: p.Axes[Tilt].Servo.RotorInertia},
		{Axis: geom.Vec3{1, 0, 0}, Armature: p.Axes[Roll].Servo.RotorInertia, Mass: m, COM: geom.Vec3{0, 0, d}, Inertia: in},
	}
}

// Step implements world.Model: the servos drive the head's three axes as
// one rigid body — the mass matrix, Coriolis and gravity terms of the
// chain (package rigid) — integrated together by RK4 in substeps; a motion
// into a hard stop ends there.
func (h *Head) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	for _, s := range h.servos {
		s.MoveSetpoint(dt)
	}
	if h.holding() {
		for i, s := range h.servos {
			s.Place(h.x[i], h.x[3+i], s.DriveTorque(h.x[i], h.x[3+i]))
		}
		h.alpha, h.omega = geom.Vec3{}, h.kinematics().w
		return
	}
	n := ode.Substeps(dt, maxSubstep)
	step := dt / float64(n)
	for k := 0; k < n; k++ {
		for i, s := range h.servos {
			h.x[i], h.x[3+i] = s.Angle(), s.Rate()
		}
		h.rk.Step(h.deriv, 0, h.x[:], step)
		h.stops()
		for i, s := range h.servos {
			s.Place(h.x[i], h.x[3+i], s.DriveTorque(h.x[i], h.x[3+i]))
		}
	}
	w := h.kinematics().w
	h.alpha = w.Sub(h.omega).Scale(1 / dt)
	h.omega = w
}

// holding reports whether the head is in equilibrium (holdRate,
// holdAccel).
func (h *Head) holding() bool {
	for i, s := range h.servos {
		h.x[i], h.x[3+i] = s.Angle(), s.Rate()
		if !(math.Abs(h.x[3+i]) <= holdRate) {
			return false
		}
	}
	var dx [6]float64
	h.derivative(0, h.x[:], dx[:])
	for i := 0; i < 3; i++ {
		if !(math.Abs(dx[3+i]) <= holdAccel) {
			return false
		}
	}
	return true
}

// stops ends every motion into a hard stop by the stop's impulse, which
// moves the other axes too (rigid.Chain.Stop).
func (h *Head) stops() {
	for i, s := range h.servos {
		lo, hi := s.Limits()
		if h.x[i] <= lo && h.x[3+i] < 0 || h.x[i] >= hi && h.x[3+i] > 0 {
			h.x[i] = ode.Clamp(h.x[i], lo, hi)
			copy(h.q, h.x[:3])
			copy(h.qd, h.x[3:])
			if h.chain.Stop(i, h.q, h.qd) != nil {
				h.qd[i] = 0
			}
			copy(h.x[3:], h.qd)
		}
	}
}

// derivative is the chain's forward dynamics under the servos' drive and
// friction: x = (angles, rates).
func (h *Head) derivative(_ float64, x, dx []float64) {
	for i, s := range h.servos {
		h.q[i], h.qd[i] = x[i], x[3+i]
		h.tau[i] = s.DriveTorque(x[i], x[3+i]) - h.p.Axes[i].Friction*x[3+i]
	}
	h.chain.UpdateNear(h.q, h.qd, poseTolerance, restRate)
	if h.chain.Accelerations(h.tau, h.a) != nil {
		clear(h.a)
	}
	for i := 0; i < 3; i++ {
		dx[i], dx[3+i] = x[3+i], h.a[i]
	}
}

// kinematics returns the angular velocity for the present angles and
// rates, computed again only when they changed.
func (h *Head) kinematics() *headKinematics {
	k := &h.kin
	a, r := h.Angles(), h.Rates()
	if k.valid && same(a[:], k.a[:]) && same(r[:], k.r[:]) {
		return k
	}
	k.valid, k.a, k.r = true, a, r
	k.w = h.angularVelocity()
	return k
}

// angularVelocity is the head's angular velocity in the robot frame: each
// joint's rate about its axis as the joints before it have turned it.
func (h *Head) angularVelocity() geom.Vec3 {
	a, r := h.Angles(), h.Rates()
	rz := geom.RotZ(a[Pan])
	ry := rz.Mul(geom.RotY(a[Tilt]))
	return geom.Vec3{0, 0, r[Pan]}.Add(rz.Col(1).Scale(r[Tilt])).Add(ry.Col(0).Scale(r[Roll]))
}

// Angles returns pan, tilt and roll, rad.
func (h *Head) Angles() [3]float64 {
	return [3]float64{h.servos[0].Angle(), h.servos[1].Angle(), h.servos[2].Angle()}
}

// Rates returns the rates of pan, tilt and roll, rad/s.
func (h *Head) Rates() [3]float64 {
	return [3]float64{h.servos[0].Rate(), h.servos[1].Rate(), h.servos[2].Rate()}
}

// Orientation returns the head's rotation in the robot frame.
func (h *Head) Orientation() geom.Mat3 {
	a := h.Angles()
	return geom.RotZ(a[Pan]).Mul(geom.RotY(a[Tilt])).Mul(geom.RotX(a[Roll]))
}

// TrueIMU returns what a perfect IMU in the head measures: specific force
// (m/s²) and angular rate (rad/s), head frame. The IMU sits IMUOffset from
// the axes, so turning the head accelerates it: α×r + ω×(ω×r), with α the
// change of ω over the last step.
func (h *Head) TrueIMU() (accel, gyro geom.Vec3) {
	a, r := h.Angles(), h.Rates()
	in := [12]float64{a[0], a[1], a[2], r[0], r[1], r[2], h.omega[0], h.omega[1], h.omega[2], h.alpha[0], h.alpha[1], h.alpha[2]}
	m := &h.imu
	if m.valid && same(in[:], m.in[:]) {
		return m.accel, m.gyro
	}
	rx, ry := geom.RotX(a[Roll]), geom.RotY(a[Tilt])
	gyro = rx.ApplyT(ry.ApplyT(geom.Vec3{0, 0, r[Pan]}).Add(geom.Vec3{0, r[Tilt], 0})).Add(geom.Vec3{r[Roll], 0, 0})
	rot := h.Orientation()
	off := rot.Apply(h.p.IMUOffset)
	lin := h.alpha.Cross(off).Add(h.omega.Cross(h.omega.Cross(off)))
	accel = rot.ApplyT(lin.Add(geom.Vec3{0, 0, StandardGravity}))
	*m = imuReading{valid: true, in: in, accel: accel, gyro: gyro}
	return accel, gyro
}

// IMU returns the IMU's reading: the true values plus noise and bias when
// the head has a random stream. Each call draws new noise.
func (h *Head) IMU() (accel, gyro geom.Vec3) {
	accel, gyro = h.TrueIMU()
	if h.rng != nil {
		for i := 0; i < 3; i++ {
			accel[i] += h.p.AccelNoise * h.rng.NormFloat64()
			gyro[i] += h.bias[i] + h.p.GyroNoise*h.rng.NormFloat64()
		}
	}
	return accel, gyro
}

// AppendState implements world.Stater.
func (h *Head) AppendState(dst []float64) []float64 {
	for _, s := range h.servos {
		dst = append(dst, s.Angle(), s.Rate())
	}
	return dst
}

// Truth implements world.Truther.
func (h *Head) Truth() any {
	acc, gyr := h.TrueIMU()
	t := msg.SimHead{Angles: h.Angles(), Rates: h.Rates(), Accel: acc, Gyro: gyr}
	for i, s := range h.servos {
		t.Torques[i], t.PulsesUS[i] = s.Torque(), s.Pulse()
	}
	return t
}
