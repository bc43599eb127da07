package balance

import (
	"math"
	"math/rand/v2"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/sim/model/battery"
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

// Motor describes a hub motor as its VESC drives it.
type Motor struct {
	Kt         float64 // N·m/A
	Ke         float64 // V·s/rad
	R          float64 // Ω
	MaxCurrent float64 // A
	PolePairs  int     // for electrical RPM
}

// Params describe the balancing base; see the package doc.
type Params struct {
	BodyMass      float64 // M, kg
	COMHeight     float64 // l, m above the axle
	BodyInertia   float64 // I_b, pitch, about the centre of mass, kg·m²
	YawInertia    float64 // I_z, body, kg·m²
	WheelMass     float64 // m_w, kg each
	WheelInertia  float64 // I_w, kg·m² each
	WheelRadius   float64 // r, m
	WheelBase     float64 // W, m between the wheels
	WheelFriction float64 // b_w, N·m·s/rad per bearing
	YawFriction   float64 // b_ψ, N·m·s/rad
	RestAngle     float64 // rad of lean where the bumper touches
	IMUHeight     float64 // h, m above the axle
	Motor         Motor
	Battery       battery.Params
	QuiescentA    float64 // A
	GyroNoise     float64 // rad/s per sample
	AccelNoise    float64 // m/s² per sample
	GyroBias      float64 // rad/s, standard deviation of the bias
}

// Default is the base described in the package doc.
func Default() Params {
	return Params{
		BodyMass: 20, COMHeight: 0.25, BodyInertia: 20 * (0.55*0.55 + 0.3*0.3) / 12, YawInertia: 0.58,
		WheelMass: 3, WheelInertia: 0.01, WheelRadius: 0.0825, WheelBase: 0.45,
		WheelFriction: 0.01, YawFriction: 0.1, RestAngle: 30 * math.Pi / 180, IMUHeight: 0.15,
		Motor:   Motor{Kt: 0.6, Ke: 0.6, R: 0.3, MaxCurrent: 40, PolePairs: 15},
		Battery: battery.LiPo10S(), QuiescentA: 0.3,
		GyroNoise: 0.005, AccelNoise: 0.033, GyroBias: 0.005,
	}
}

func (p Params) valid() bool {
	m := p.Motor
	return ode.Finite(p.BodyMass, p.COMHeight, p.BodyInertia, p.YawInertia, p.WheelMass, p.WheelInertia, p.WheelRadius,
		p.WheelBase, p.WheelFriction, p.YawFriction, p.RestAngle, p.IMUHeight, m.Kt, m.Ke, m.R, m.MaxCurrent,
		p.QuiescentA, p.GyroNoise, p.AccelNoise, p.GyroBias) &&
		p.BodyMass > 0 && p.COMHeight > 0 && p.BodyInertia >= 0 && p.YawInertia > 0 && p.WheelMass >= 0 &&
		p.WheelInertia >= 0 && p.WheelRadius > 0 && p.WheelBase > 0 && p.WheelFriction >= 0 && p.YawFriction >= 0 &&
		p.RestAngle > 0 && p.RestAngle < math.Pi/2 && m.Kt > 0 && m.Ke >= 0 && m.R > 0 && m.MaxCurrent > 0 && m.PolePairs > 0
}

// Drive modes of a wheel.
const (
	modeTorque = iota
	modeDuty
)

// State layout.
const (
	sX = iota
	sV
	sPitch
	sPitchRate
	sYaw
	sYawRate
	sPhiL // wheel angles, absolute, rad
	sPhiR
	sPosX // world position
	sPosY
	nState
)

// Balance is the balancing base.
type Balance struct {
	p    Params
	bat  *battery.Battery
	x    [nState]float64
	dx   [nState]float64 // derivative at the end of the last step
	mode [2]int
	cmd  [2]float64 // torque (N·m) or duty
	dead [2]bool
	push geom.Vec3

	rng   *rand.Rand
	bias  geom.Vec3
	rk    ode.RK4
	deriv ode.Deriv

	torque  [2]float64 // motor torque, last evaluation
	current [2]float64 // motor current, A
	batI    float64
}

// New returns the base upright at rest at the origin, facing +x. With rng
// the IMU is noisy and biased. Invalid parameters take Default's.
func New(p Params, rng *rand.Rand) *Balance {
	if !p.valid() {
		p = Default()
	}
	b := &Balance{p: p, bat: battery.New(p.Battery), rng: rng}
	if rng != nil {
		for i := range b.bias {
			b.bias[i] = p.GyroBias * rng.NormFloat64()
		}
	}
	b.deriv = b.derivative
	return b
}

// Name implements world.Model.
func (b *Balance) Name() string { return "balance" }

// Params returns the base's parameters.
func (b *Balance) Params() Params { return b.p }

// Battery returns the battery model.
func (b *Balance) Battery() *battery.Battery { return b.bat }

// SetWheelTorque commands a wheel's motor torque (N·m, positive drives
// forward), limited by the motor's current limit.
func (b *Balance) SetWheelTorque(side int, tau float64) {
	if (side == Left || side == Right) && ode.Finite(tau) {
		lim := b.p.Motor.Kt * b.p.Motor.MaxCurrent
		b.mode[side], b.cmd[side] = modeTorque, ode.Clamp(tau, -lim, lim)
	}
}

// SetWheelCurrent commands a wheel's motor current (A), as a VESC's
// SET_CURRENT does.
func (b *Balance) SetWheelCurrent(side int, amps float64) {
	if ode.Finite(amps) {
		b.SetWheelTorque(side, amps*b.p.Motor.Kt)
	}
}

// SetWheelDuty commands a wheel's duty cycle (−1 to 1), as SET_DUTY does.
func (b *Balance) SetWheelDuty(side int, duty float64) {
	if (side == Left || side == Right) && ode.Finite(duty) {
		b.mode[side], b.cmd[side] = modeDuty, ode.Clamp(duty, -1, 1)
	}
}

// SetWheelDead kills (true) or revives one wheel's motor.
func (b *Balance) SetWheelDead(side int, dead bool) {
	if side == Left || side == Right {
		b.dead[side] = dead
	}
}

// SetDead implements world.Killable: both motors.
func (b *Balance) SetDead(dead bool) { b.dead = [2]bool{dead, dead} }

// ApplyForce implements world.Pushable: a force at the centre of mass,
// world frame. The component across the heading is taken by the wheels.
func (b *Balance) ApplyForce(f geom.Vec3) {
	if ode.Finite(f[0], f[1], f[2]) {
		b.push = f
	}
}

// SetPitch places the body at pitch (rad) with rate (rad/s).
func (b *Balance) SetPitch(pitch, rate float64) {
	if ode.Finite(pitch, rate) {
		b.x[sPitch] = ode.Clamp(pitch, -b.p.RestAngle, b.p.RestAngle)
		b.x[sPitchRate] = rate
	}
}

// motor returns the torque and current of wheel k at relative speed w
// (rad/s, wheel relative to body) and battery voltage vb.
func (b *Balance) motor(k int, w, vb float64) (tau, amps float64) {
	m := b.p.Motor
	if b.dead[k] {
		return 0, 0
	}
	switch b.mode[k] {
	case modeDuty:
		amps = ode.Clamp((b.cmd[k]*vb-m.Ke*w)/m.R, -m.MaxCurrent, m.MaxCurrent)
	default:
		amps = b.cmd[k] / m.Kt
	}
	return m.Kt * amps, amps
}

func (b *Balance) derivative(_ float64, x, d []float64) {
	p := &b.p
	M, l, r, g := p.BodyMass, p.COMHeight, p.WheelRadius, StandardGravity
	th, thd := x[sPitch], x[sPitchRate]
	sin, cos := math.Sincos(th)
	vb := b.bat.Terminal(b.batI)
	rel := [2]float64{x[sV]/r - x[sYawRate]*p.WheelBase/(2*r) - thd, x[sV]/r + x[sYawRate]*p.WheelBase/(2*r) - thd}
	var net [2]float64
	ib := p.QuiescentA
	for k := 0; k < 2; k++ {
		tau, amps := b.motor(k, rel[k], vb)
		b.torque[k], b.current[k] = tau, amps
		if vb > 0 {
			ib += (p.Motor.R*amps*amps + p.Motor.Ke*rel[k]*amps) / vb
		}
		net[k] = tau - p.WheelFriction*rel[k]
	}
	b.batI = ib
	ys, yc := math.Sincos(x[sYaw])
	fx := b.push[0]*yc + b.push[1]*ys
	fz := b.push[2]
	tau := net[0] + net[1]
	a11 := M + 2*p.WheelMass + 2*p.WheelInertia/(r*r)
	a12 := M * l * cos
	a22 := p.BodyInertia + M*l*l
	r1 := tau/r + M*l*sin*thd*thd + fx
	r2 := M*g*l*sin - tau + fx*l*cos - fz*l*sin
	det := a11*a22 - a12*a12
	xdd := (r1*a22 - a12*r2) / det
	thdd := (a11*r2 - a12*r1) / det
	// On the bumper and pushed further onto it: pitch is held.
	if math.Abs(th) >= p.RestAngle && thdd*th > 0 && thd*th >= 0 {
		thdd = 0
		xdd = r1 / a11
	}
	iPsi := p.YawInertia + p.WheelMass*p.WheelBase*p.WheelBase/2 + p.WheelInertia*p.WheelBase*p.WheelBase/(2*r*r)
	psidd := (p.WheelBase/(2*r)*(net[Right]-net[Left]) - p.YawFriction*x[sYawRate]) / iPsi
	d[sX] = x[sV]
	d[sV] = xdd
	d[sPitch] = thd
	d[sPitchRate] = thdd
	d[sYaw] = x[sYawRate]
	d[sYawRate] = psidd
	d[sPhiL] = (x[sV] - x[sYawRate]*p.WheelBase/2) / r
	d[sPhiR] = (x[sV] + x[sYawRate]*p.WheelBase/2) / r
	d[sPosX] = x[sV] * yc
	d[sPosY] = x[sV] * ys
}

// Step implements world.Model.
func (b *Balance) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	n := ode.Substeps(dt, 1e-3)
	h := dt / float64(n)
	for k := 0; k < n; k++ {
		b.rk.Step(b.deriv, 0, b.x[:], h)
		if lim := b.p.RestAngle; math.Abs(b.x[sPitch]) > lim {
			b.x[sPitch] = math.Copysign(lim, b.x[sPitch])
			if b.x[sPitchRate]*b.x[sPitch] > 0 {
				b.x[sPitchRate] = 0
			}
		}
		b.bat.Draw(b.batI, h)
	}
	b.deriv(0, b.x[:], b.dx[:])
}

// Pitch returns the pitch (rad, forward lean positive) and its rate.
func (b *Balance) Pitch() (pitch, rate float64) { return b.x[sPitch], b.x[sPitchRate] }

// Yaw returns the heading (rad) and yaw rate (rad/s).
func (b *Balance) Yaw() (yaw, rate float64) { return b.x[sYaw], b.x[sYawRate] }

// Position returns the axle's travel along its path (m) and speed (m/s).
func (b *Balance) Position() (x, v float64) { return b.x[sX], b.x[sV] }

// WorldPosition returns the axle's position on the floor, m.
func (b *Balance) WorldPosition() (x, y float64) { return b.x[sPosX], b.x[sPosY] }

// WheelAngle returns a wheel's angle relative to the body (what its
// motor's sensors see), rad.
func (b *Balance) WheelAngle(side int) float64 { return b.x[sPhiL+side] - b.x[sPitch] }

// WheelRate returns a wheel's speed relative to the body, rad/s.
func (b *Balance) WheelRate(side int) float64 { return b.dx[sPhiL+side] - b.x[sPitchRate] }

// ERPM returns a wheel motor's electrical RPM, as a VESC reports it.
func (b *Balance) ERPM(side int) float64 {
	return b.WheelRate(side) * 60 / (2 * math.Pi) * float64(b.p.Motor.PolePairs)
}

// MotorTorque returns a wheel motor's torque in the last step, N·m.
func (b *Balance) MotorTorque(side int) float64 { return b.torque[side] }

// MotorCurrent returns a wheel motor's current in the last step, A.
func (b *Balance) MotorCurrent(side int) float64 { return b.current[side] }

// BatteryVoltage returns the pack's terminal voltage, V.
func (b *Balance) BatteryVoltage() float64 { return b.bat.Terminal(b.batI) }

// BatteryCurrent returns the current drawn from the pack, A.
func (b *Balance) BatteryCurrent() float64 { return b.batI }

// Fallen reports whether the body rests on its bumper.
func (b *Balance) Fallen() bool { return math.Abs(b.x[sPitch]) >= b.p.RestAngle }

// TrueIMU returns what a perfect IMU h above the axle measures, body frame:
// specific force (m/s²) and rate (rad/s).
func (b *Balance) TrueIMU() (accel, gyro geom.Vec3) {
	h := b.p.IMUHeight
	th, thd, thdd := b.x[sPitch], b.x[sPitchRate], b.dx[sPitchRate]
	sin, cos := math.Sincos(th)
	// Acceleration of the IMU in the heading frame (x along the heading,
	// y left, z up), the centripetal part of the turn on y.
	a := geom.Vec3{
		b.dx[sV] + h*(cos*thdd-sin*thd*thd),
		b.x[sV] * b.x[sYawRate],
		-h * (sin*thdd + cos*thd*thd),
	}
	f := a.Add(geom.Vec3{0, 0, StandardGravity})
	accel = geom.RotY(th).ApplyT(f)
	psid := b.x[sYawRate]
	gyro = geom.Vec3{-psid * sin, thd, psid * cos}
	return accel, gyro
}

// IMU returns the IMU's reading, with noise and bias when the base has a
// random stream.
func (b *Balance) IMU() (accel, gyro geom.Vec3) {
	accel, gyro = b.TrueIMU()
	if b.rng != nil {
		for i := 0; i < 3; i++ {
			accel[i] += b.p.AccelNoise * b.rng.NormFloat64()
			gyro[i] += b.bias[i] + b.p.GyroNoise*b.rng.NormFloat64()
		}
	}
	return accel, gyro
}

// AppendState implements world.Stater.
func (b *Balance) AppendState(dst []float64) []float64 {
	return append(append(dst, b.x[:]...), b.bat.SoC())
}

// Truth implements world.Truther.
func (b *Balance) Truth() any {
	acc, gyr := b.TrueIMU()
	return msg.SimBalance{
		X: b.x[sPosX], Y: b.x[sPosY], Pitch: b.x[sPitch], PitchRate: b.x[sPitchRate], Speed: b.x[sV],
		Yaw: b.x[sYaw], YawRate: b.x[sYawRate],
		Wheel:     [2]float64{b.WheelAngle(Left), b.WheelAngle(Right)},
		WheelRate: [2]float64{b.WheelRate(Left), b.WheelRate(Right)},
		Torque:    b.torque, Fallen: b.Fallen(), Accel: acc, Gyro: gyr,
	}
}
