package tracks

import (
	"math"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/sim/model/battery"
	"github.com/saint-os/saint/sim/model/dcmotor"
	"github.com/saint-os/saint/sim/model/geom"
	"github.com/saint-os/saint/sim/model/ode"
)

// StandardGravity is g₀, m/s².
const StandardGravity = 9.80665

// Sides.
const (
	Left  = 0
	Right = 1
)

const maxSubstep = 5e-4 // s

// Params describe the tracked base; see the package doc.
type Params struct {
	Motor             dcmotor.Params
	GearRatio         float64 // N, motor turns per sprocket turn
	SprocketRadius    float64 // r_s, m
	TrackInertia      float64 // J_t, sprocket and track at the sprocket, kg·m²
	Mass              float64 // m, kg
	YawInertia        float64 // I_z, kg·m²
	Gauge             float64 // B, m between track centres
	ContactLength     float64 // l, m of track on the ground
	Friction          float64 // μ, along the track
	LateralFriction   float64 // μ_lat, across it
	SlipVelocity      float64 // s₀, m/s, along the track
	LateralSlip       float64 // s_lat, m/s, across it
	RollingResistance float64 // C_rr
	EncoderCPR        float64 // counts per sprocket revolution
	Battery           battery.Params
	QuiescentA        float64 // A drawn by the electronics
}

// Default is the base described in the package doc.
func Default() Params {
	base := kinematics.DefaultTrackedBase()
	return Params{
		Motor: dcmotor.Gearmotor24V(), GearRatio: 20, SprocketRadius: base.SprocketRadius, TrackInertia: 0.01,
		Mass: 20, YawInertia: 20 * (base.Length*base.Length + base.Width*base.Width) / 12, Gauge: base.Gauge, ContactLength: base.ContactLength,
		Friction: 0.8, LateralFriction: 0.5, SlipVelocity: 0.05, LateralSlip: 0.01, RollingResistance: 0.03,
		EncoderCPR: 11 * 4 * 20, Battery: battery.LiFePO4_8S(), QuiescentA: 0.5,
	}
}

func (p Params) valid() bool {
	return p.Motor.Valid() && p.Motor.L > 0 &&
		ode.Finite(p.GearRatio, p.SprocketRadius, p.TrackInertia, p.Mass, p.YawInertia, p.Gauge, p.ContactLength,
			p.Friction, p.LateralFriction, p.SlipVelocity, p.LateralSlip, p.RollingResistance, p.EncoderCPR, p.QuiescentA) &&
		p.GearRatio > 0 && p.SprocketRadius > 0 && p.TrackInertia >= 0 && p.Mass > 0 && p.YawInertia > 0 &&
		p.Gauge > 0 && p.ContactLength >= 0 && p.Friction > 0 && p.LateralFriction >= 0 && p.SlipVelocity > 0 && p.LateralSlip > 0 &&
		p.RollingResistance >= 0 && p.EncoderCPR > 0 && p.QuiescentA >= 0
}

// State vector layout.
const (
	sIL = iota
	sWL
	sThL
	sIR
	sWR
	sThR
	sVel
	sVelY
	sYawRate
	sX
	sY
	sHead
	nState
)

// Tracks is the tracked base.
type Tracks struct {
	p    Params
	bat  *battery.Battery
	x    [nState]float64
	duty [2]float64
	en   [2]bool
	dead [2]bool
	push geom.Vec3 // world frame, N

	jEff   float64 // rotor + track inertia at the motor, kg·m²
	rk     ode.RK4
	deriv  ode.Deriv
	force  [2]float64 // traction, last derivative evaluation
	law    contactLaw
	points [ContactPoints]float64 // the contact points' x, m ahead of the middle
	nPts   int                    // how many of points are in use
	load   float64                // N on each contact point
	volts  [2]float64
	batI   float64
	travel [2]float64 // m of track travelled

	scratch [nState]float64

	alwaysIntegrate bool // tests: no shortcut at rest
}

// New returns the base at the origin facing +x, at rest, battery full,
// bridges disabled. Invalid parameters take Default's.
func New(p Params) *Tracks {
	if !p.valid() {
		p = Default()
	}
	t := &Tracks{p: p, bat: battery.New(p.Battery)}
	t.jEff = p.EffectiveInertia()
	t.law = p.contactLaw()
	// Tracks without length touch the floor at one point under the axle.
	t.nPts = ContactPoints
	if p.ContactLength == 0 {
		t.nPts = 1
	}
	for k := 0; k < t.nPts; k++ {
		t.points[k] = -p.ContactLength/2 + (float64(k)+0.5)*p.ContactLength/float64(t.nPts)
	}
	t.load = p.Mass * StandardGravity / 2 / float64(t.nPts)
	t.deriv = t.derivative
	return t
}

// Name implements world.Model.
func (t *Tracks) Name() string { return "tracks" }

// Params returns the base's parameters.
func (t *Tracks) Params() Params { return t.p }

// Battery returns the battery model.
func (t *Tracks) Battery() *battery.Battery { return t.bat }

// SetDrive sets one side's H-bridge: signed duty (−1 to 1, positive drives
// forward) and whether its enables are high. Non-finite duty counts as 0.
func (t *Tracks) SetDrive(side int, duty float64, enabled bool) {
	if side != Left && side != Right {
		return
	}
	if !ode.Finite(duty) {
		duty = 0
	}
	t.duty[side], t.en[side] = ode.Clamp(duty, -1, 1), enabled
}

// SetMotorDead kills (true) or revives one side's motor.
func (t *Tracks) SetMotorDead(side int, dead bool) {
	if side == Left || side == Right {
		t.dead[side] = dead
	}
}

// SetDead implements world.Killable: both motors.
func (t *Tracks) SetDead(dead bool) { t.dead = [2]bool{dead, dead} }

// ApplyForce implements world.Pushable: a force on the body, world frame.
func (t *Tracks) ApplyForce(f geom.Vec3) {
	if ode.Finite(f[0], f[1], f[2]) {
		t.push = f
	}
}

// SetPose places the base at (x, y) with heading (rad), at rest.
func (t *Tracks) SetPose(x, y, heading float64) {
	if ode.Finite(x, y, heading) {
		t.x[sX], t.x[sY], t.x[sHead], t.x[sVel], t.x[sVelY], t.x[sYawRate] = x, y, heading, 0, 0, 0
	}
}

func (t *Tracks) open(side int) bool { return !t.en[side] || t.dead[side] }

func (t *Tracks) derivative(_ float64, x, d []float64) {
	p := &t.p
	ib := p.QuiescentA
	for s := 0; s < 2; s++ {
		if !t.open(s) {
			ib += t.duty[s] * x[3*s]
		}
	}
	vt := t.bat.Terminal(ib)
	t.batI = ib
	var fy, mz float64
	for s := 0; s < 2; s++ {
		i, w := x[3*s], x[3*s+1]
		vTrack := w / p.GearRatio * p.SprocketRadius
		f, lat, m := t.track(s, vTrack, x[sVel], x[sVelY], x[sYawRate])
		fy += lat
		mz += m
		t.force[s] = f
		load := f * p.SprocketRadius / p.GearRatio
		if t.open(s) {
			t.volts[s] = 0
			d[3*s] = 0
			d[3*s+1] = (-p.Motor.B*w - load) / t.jEff
		} else {
			v := t.duty[s] * vt
			t.volts[s] = v
			d[3*s] = (v - p.Motor.R*i - p.Motor.Ke*w) / p.Motor.L
			d[3*s+1] = (p.Motor.Kt*i - p.Motor.B*w - load) / t.jEff
		}
		d[3*s+2] = w
	}
	h := x[sHead]
	sin, cos := math.Sincos(h)
	// The push in the body frame.
	px := cos*t.push[0] + sin*t.push[1]
	py := -sin*t.push[0] + cos*t.push[1]
	fx := t.force[Left] + t.force[Right] - p.Rolling(x[sVel]) + px
	fy += py
	d[sVel] = fx/p.Mass + x[sVelY]*x[sYawRate]
	d[sVelY] = fy/p.Mass - x[sVel]*x[sYawRate]
	d[sYawRate] = mz / p.YawInertia
	d[sX] = x[sVel]*cos - x[sVelY]*sin
	d[sY] = x[sVel]*sin + x[sVelY]*cos
	d[sHead] = x[sYawRate]
}

// Step implements world.Model.
func (t *Tracks) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	for s := 0; s < 2; s++ {
		if t.open(s) {
			t.x[3*s] = 0
		}
	}
	n := ode.Substeps(dt, math.Min(maxSubstep, 2*t.p.Motor.MaxSubstep()))
	h := dt / float64(n)
	if !t.alwaysIntegrate && t.atRest() {
		// Every derivative is exactly zero: RK4 would leave the state as
		// it is, and only the battery drains (quiescent current).
		for k := 0; k < n; k++ {
			t.bat.Draw(t.batI, h)
		}
		t.deriv(0, t.x[:], t.scratch[:])
		return
	}
	for k := 0; k < n; k++ {
		th0 := [2]float64{t.x[sThL], t.x[sThR]}
		t.rk.Step(t.deriv, 0, t.x[:], h)
		t.bat.Draw(t.batI, h)
		for s := 0; s < 2; s++ {
			t.travel[s] += (t.x[3*s+2] - th0[s]) / t.p.GearRatio * t.p.SprocketRadius
		}
	}
	// Leave the derived outputs consistent with the final state.
	t.deriv(0, t.x[:], t.scratch[:])
}

// atRest reports whether every state derivative is exactly zero: the base
// stands still, unpushed, with no current and no voltage on its motors.
func (t *Tracks) atRest() bool {
	// A turning motor or body moves an angle: no need to evaluate the
	// derivative to know it is not zero.
	if t.x[sWL] != 0 || t.x[sWR] != 0 || t.x[sYawRate] != 0 {
		return false
	}
	t.deriv(0, t.x[:], t.scratch[:])
	for _, d := range t.scratch {
		if d != 0 {
			return false
		}
	}
	return true
}

// Pose returns x, y (m) and heading (rad).
func (t *Tracks) Pose() (x, y, heading float64) { return t.x[sX], t.x[sY], t.x[sHead] }

// Velocity returns forward speed (m/s), lateral speed (m/s) and yaw rate (rad/s).
func (t *Tracks) Velocity() (v, vy, yawRate float64) { return t.x[sVel], t.x[sVelY], t.x[sYawRate] }

// MotorCurrent returns one side's motor current, A.
func (t *Tracks) MotorCurrent(side int) float64 { return t.x[3*side] }

// MotorSpeed returns one side's motor speed, rad/s.
func (t *Tracks) MotorSpeed(side int) float64 { return t.x[3*side+1] }

// MotorVoltage returns the voltage across one side's motor, V.
func (t *Tracks) MotorVoltage(side int) float64 { return t.volts[side] }

// TrackSpeed returns one side's track surface speed, m/s.
func (t *Tracks) TrackSpeed(side int) float64 {
	return t.x[3*side+1] / t.p.GearRatio * t.p.SprocketRadius
}

// TrackTravel returns how far one side's track surface has moved, m.
func (t *Tracks) TrackTravel(side int) float64 { return t.travel[side] }

// SprocketAngle returns one side's sprocket angle, rad.
func (t *Tracks) SprocketAngle(side int) float64 { return t.x[3*side+2] / t.p.GearRatio }

// EncoderCount returns one side's quadrature count (4 per encoder line).
func (t *Tracks) EncoderCount(side int) int64 {
	return int64(math.Floor(t.SprocketAngle(side) * t.p.EncoderCPR / (2 * math.Pi)))
}

// BatteryVoltage returns the battery's terminal voltage, V.
func (t *Tracks) BatteryVoltage() float64 { return t.bat.Terminal(t.batI) }

// BatteryCurrent returns the current drawn from the battery, A.
func (t *Tracks) BatteryCurrent() float64 { return t.batI }

// AppendState implements world.Stater.
func (t *Tracks) AppendState(dst []float64) []float64 {
	return append(append(dst, t.x[:]...), t.bat.SoC())
}

// Truth implements world.Truther.
func (t *Tracks) Truth() any {
	return msg.SimTracks{
		X: t.x[sX], Y: t.x[sY], Heading: t.x[sHead], Speed: t.x[sVel], YawRate: t.x[sYawRate],
		TrackSpeed: [2]float64{t.TrackSpeed(Left), t.TrackSpeed(Right)},
		Current:    [2]float64{t.x[sIL], t.x[sIR]},
		Voltage:    t.volts,
		Encoder:    [2]int64{t.EncoderCount(Left), t.EncoderCount(Right)},
		Distance:   t.travel,
		BatteryV:   t.BatteryVoltage(), BatteryA: t.batI, BatterySoC: t.bat.SoC(),
	}
}

// track returns the floor's forces on one side's track, whose surface moves
// at vt (m/s) under the body moving at v forward, vy to the left and
// turning at r (rad/s): the traction along the track (N, forward), the
// force across it (N, to the left) and their moment about the body's
// middle (N·m, to the left), summed over the track's contact points.
func (t *Tracks) track(side int, vt, v, vy, r float64) (traction, lateral, moment float64) {
	y := t.p.Gauge / 2 // the track's offset to the left
	if side == Right {
		y = -y
	}
	// The ground under a point at (px, y) moves at (v − r·y, vy + r·px) in
	// the body frame; the track's surface at vt along it.
	sx := vt - (v - r*y)
	for _, px := range t.points[:t.nPts] {
		fx, fy := t.law.force(t.load, sx, -(vy + r*px))
		traction += fx
		lateral += fy
		moment += px*fy - y*fx
	}
	return traction, lateral, moment
}
