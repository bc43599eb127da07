package balance

import (
	"fmt"
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
	// Friction is the floor's Coulomb friction coefficient μ under the
	// wheels, except on Floor's patches.
	Friction float64
	// Floor lists patches of different friction; where patches overlap the
	// first listed wins.
	Floor []Patch
	// Bumps lists the floor's bumps (none: the floor is flat and level).
	Bumps []Bump
}

// Bump is a ridge across the floor (along world y) centred at world x At:
// a raised cosine of Height (m; negative for a dip) over Length (m),
// h(x) = Height·(1 + cos(2π·(x − At)/Length))/2 for |x − At| < Length/2,
// smooth in slope. A wheel of radius r follows it only where its
// curvature stays below 1/r, so Length must be at least
// 2π·√(|Height|·r/2) (MinBumpLength).
type Bump struct {
	At, Height, Length float64
}

// Patch is a strip of floor, From ≤ x < To in world metres, whose friction
// coefficient is Mu (a wet tile ≈ 0.1, polished concrete ≈ 0.5, rubber on
// asphalt ≈ 0.9).
type Patch struct {
	From, To float64
	Mu       float64
}

// DefaultFriction is μ of a dry floor under rubber tyres.
const DefaultFriction = 1.0

// Default is the base described in the package doc.
func Default() Params {
	return Params{
		BodyMass: 20, COMHeight: 0.25, BodyInertia: 20 * (0.55*0.55 + 0.3*0.3) / 12, YawInertia: 0.58,
		WheelMass: 3, WheelInertia: 0.01, WheelRadius: 0.0825, WheelBase: 0.45,
		WheelFriction: 0.01, YawFriction: 0.1, RestAngle: 30 * math.Pi / 180, IMUHeight: 0.15,
		Motor:   Motor{Kt: 0.6, Ke: 0.6, R: 0.3, MaxCurrent: 40, PolePairs: 15},
		Battery: battery.LiPo10S(), QuiescentA: 0.3,
		GyroNoise: 0.005, AccelNoise: 0.033, GyroBias: 0.005, Friction: DefaultFriction,
	}
}

func (p Params) valid() bool {
	m := p.Motor
	return ode.Finite(p.BodyMass, p.COMHeight, p.BodyInertia, p.YawInertia, p.WheelMass, p.WheelInertia, p.WheelRadius,
		p.WheelBase, p.WheelFriction, p.YawFriction, p.RestAngle, p.IMUHeight, m.Kt, m.Ke, m.R, m.MaxCurrent,
		p.QuiescentA, p.GyroNoise, p.AccelNoise, p.GyroBias, p.Friction) && ValidFloor(p.Floor) == nil && p.Friction >= 0 &&
		ValidBumps(p.Bumps, p.WheelRadius) == nil &&
		p.BodyMass > 0 && p.COMHeight > 0 && p.BodyInertia >= 0 && p.YawInertia > 0 && p.WheelMass >= 0 &&
		p.WheelInertia >= 0 && p.WheelRadius > 0 && p.WheelBase > 0 && p.WheelFriction >= 0 && p.YawFriction >= 0 &&
		p.RestAngle > 0 && p.RestAngle < math.Pi/2 && m.Kt > 0 && m.Ke >= 0 && m.R > 0 && m.MaxCurrent > 0 && m.PolePairs > 0
}

// ValidFloor checks a floor's patches: finite, From < To, μ ≥ 0.
func ValidFloor(floor []Patch) error {
	for i, pt := range floor {
		switch {
		case !ode.Finite(pt.From, pt.To, pt.Mu):
			return fmt.Errorf("floor[%d]: from, to and mu must be finite", i)
		case pt.From >= pt.To:
			return fmt.Errorf("floor[%d]: from %g must be below to %g", i, pt.From, pt.To)
		case pt.Mu < 0:
			return fmt.Errorf("floor[%d].mu: %g is negative", i, pt.Mu)
		}
	}
	return nil
}

// MinBumpLength is the shortest bump of height h (m) a wheel of radius r
// (m) can roll over while touching it at one point: the raised cosine's
// largest curvature, |h|/2·(2π/L)², at most 1/r.
func MinBumpLength(h, r float64) float64 { return 2 * math.Pi * math.Sqrt(math.Abs(h)*r/2) }

// ValidBumps checks a floor's bumps for wheels of radius r: finite, a
// positive length the wheels can follow, not overlapping.
func ValidBumps(bumps []Bump, r float64) error {
	for i, bp := range bumps {
		switch {
		case !ode.Finite(bp.At, bp.Height, bp.Length):
			return fmt.Errorf("bumps[%d]: at, height and length must be finite", i)
		case bp.Height == 0:
			return fmt.Errorf("bumps[%d].height: want a height other than 0 (m, negative for a dip)", i)
		case !(bp.Length >= MinBumpLength(bp.Height, r)):
			return fmt.Errorf("bumps[%d].length: %g m is too short for wheels of radius %g m to follow a %g m bump; want at least %.3g m",
				i, bp.Length, r, bp.Height, MinBumpLength(bp.Height, r))
		}
		for j, o := range bumps[:i] {
			if math.Abs(bp.At-o.At) < (bp.Length+o.Length)/2 {
				return fmt.Errorf("bumps[%d]: overlaps bumps[%d] (at %g and %g m)", i, j, bp.At, o.At)
			}
		}
	}
	return nil
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
	sOmegaL // wheel rates, absolute, rad/s
	sOmegaR
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
	floor []Patch
	bumps []Bump
	rk    ode.RK4
	deriv ode.Deriv

	torque  [2]float64 // motor torque, last evaluation
	current [2]float64 // motor current, A
	batI    float64
	contact [2]float64 // ground's force on each wheel along the heading, N
	normal  [2]float64 // ground's normal force on each wheel, N
	slip    [2]bool    // wheel sliding in the last evaluation
}

// slipSnap is the slip speed (m/s) below which a sliding wheel is taken to
// grip again at the end of a step: a sliding wheel's slip changes by about
// μ·N·r²/I_w·dt per step (≈ 10 mm/s at μ = 0.1 and 1 ms), so a slip that
// reverses or falls under this has stopped.
const slipSnap = 1e-6

// slipEps is the slip speed (m/s) above which a wheel counts as sliding
// within a step's evaluations.
const slipEps = 1e-9

// New returns the base upright at rest at the origin, facing +x. With rng
// the IMU is noisy and biased. Invalid parameters take Default's.
func New(p Params, rng *rand.Rand) *Balance {
	if !p.valid() {
		p = Default()
	}
	b := &Balance{p: p, bat: battery.New(p.Battery), rng: rng, floor: append([]Patch(nil), p.Floor...),
		bumps: append([]Bump(nil), p.Bumps...)}
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

// SetFloor replaces the floor's friction patches (see Params.Floor).
func (b *Balance) SetFloor(floor []Patch) error {
	if err := ValidFloor(floor); err != nil {
		return err
	}
	b.floor = append(b.floor[:0:0], floor...)
	return nil
}

// SetBumps replaces the floor's bumps (see Params.Bumps). The base keeps
// its travel and pose; it should not stand on a bump that appears under it.
func (b *Balance) SetBumps(bumps []Bump) error {
	if err := ValidBumps(bumps, b.p.WheelRadius); err != nil {
		return err
	}
	b.bumps = append(b.bumps[:0:0], bumps...)
	return nil
}

// FloorHeight returns the floor's height (m) at world x and its first
// and second derivatives along x.
func (b *Balance) FloorHeight(x float64) (h, dh, ddh float64) {
	for _, bp := range b.bumps {
		u := x - bp.At
		if math.Abs(u) >= bp.Length/2 {
			continue
		}
		k := 2 * math.Pi / bp.Length
		s, c := math.Sincos(k * u)
		return bp.Height * (1 + c) / 2, -bp.Height * k * s / 2, -bp.Height * k * k * c / 2
	}
	return 0, 0, 0
}

// ground returns the floor under the axle along the heading: the sine and
// cosine of its slope angle α (rising ahead positive) and its curvature κ
// along the path (1/m, positive where it curves up, as in a dip).
func (b *Balance) ground(x []float64, yc float64) (sa, ca, kappa float64) {
	_, dh, ddh := b.FloorHeight(x[sPosX])
	slope := dh * yc
	ca = 1 / math.Sqrt(1+slope*slope)
	return slope * ca, ca, ddh * yc * yc * ca * ca * ca
}

// FrictionAt returns the floor's friction coefficient at world x.
func (b *Balance) FrictionAt(x float64) float64 {
	for _, pt := range b.floor {
		if x >= pt.From && x < pt.To {
			return pt.Mu
		}
	}
	return b.p.Friction
}

// SetPose places the axle at (x, y) on the floor, m, heading yaw (rad),
// keeping its motion.
func (b *Balance) SetPose(x, y, yaw float64) {
	if ode.Finite(x, y, yaw) {
		b.x[sPosX], b.x[sPosY], b.x[sYaw] = x, y, yaw
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
		// The VESC's current loop can only push the current the pack's
		// voltage allows against the back-EMF: a wheel spinning free on a
		// slippery floor tops out near V_bat/K_e.
		v := math.Max(vb, 0)
		amps = ode.Clamp(b.cmd[k]/m.Kt, (-v-m.Ke*w)/m.R, (v-m.Ke*w)/m.R)
	}
	return m.Kt * amps, amps
}

func (b *Balance) derivative(_ float64, x, d []float64) {
	p := &b.p
	M, l, r, g, W := p.BodyMass, p.COMHeight, p.WheelRadius, StandardGravity, p.WheelBase
	th, thd := x[sPitch], x[sPitchRate]
	sin, cos := math.Sincos(th)
	vb := b.bat.Terminal(b.batI)
	omega := [2]float64{x[sOmegaL], x[sOmegaR]}
	rel := [2]float64{omega[Left] - thd, omega[Right] - thd}
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
	// On a bump the axle moves along the floor's slope α and curvature κ:
	// the push and gravity split along the floor (ft, and the weight's
	// share against the travel, gs) and across it (fn), the body couples
	// to the travel through its lean from the floor's normal, θ + α
	// (sta, cta), and the axle's centripetal acceleration κ·v² swings the
	// body and loads the wheels. On a flat floor these are the plain
	// terms, computed no differently.
	ft, fn, gs, gn, sta, cta, cen := fx, fz, 0.0, g, sin, cos, 0.0
	if len(b.bumps) > 0 {
		sa, ca, kappa := b.ground(x, yc)
		ft, fn = fx*ca+fz*sa, fz*ca-fx*sa
		gs, gn = g*sa, g*ca
		sta, cta = sin*ca+cos*sa, cos*ca-sin*sa
		cen = kappa * x[sV] * x[sV]
	}
	// The floor carries the weight less the push's lift and the body's
	// centripetal swing, shared equally by the wheels.
	nk := math.Max(0, ((M+2*p.WheelMass)*(gn+cen)-fn-M*l*cta*thd*thd)/2)
	side := [2]float64{-1, 1}
	var mu, slipV [2]float64
	for k := 0; k < 2; k++ {
		mu[k] = b.FrictionAt(x[sPosX] + side[k]*ys*W/2)
		slipV[k] = r*omega[k] - (x[sV] + side[k]*x[sYawRate]*W/2)
		b.normal[k] = nk
	}
	bumper := func(thdd float64) bool { return math.Abs(th) >= p.RestAngle && thdd*th > 0 && thd*th >= 0 }

	// Both wheels rolling: the closed form of the package doc.
	a11 := M + 2*p.WheelMass + 2*p.WheelInertia/(r*r)
	a12 := M * l * cta
	a22 := p.BodyInertia + M*l*l
	iPsi0 := p.YawInertia + p.WheelMass*W*W/2
	tau := net[0] + net[1]
	r1 := tau/r + M*l*sta*thd*thd + ft - (M+2*p.WheelMass)*gs
	r2 := M*g*l*sin + M*l*sta*cen - tau + fx*l*cos - fz*l*sin
	rollingForce := func(k int, xdd, psidd float64) float64 {
		return (net[k] - p.WheelInertia*(xdd+side[k]*psidd*W/2)/r) / r
	}
	var xdd, thdd, psidd float64
	sliding := [2]bool{p.WheelInertia > 0 && math.Abs(slipV[0]) > slipEps, p.WheelInertia > 0 && math.Abs(slipV[1]) > slipEps}
	var sign [2]float64
	for k := 0; k < 2; k++ {
		sign[k] = math.Copysign(1, slipV[k])
	}
	for pass := 0; ; pass++ {
		if !sliding[0] && !sliding[1] {
			det := a11*a22 - a12*a12
			xdd = (r1*a22 - a12*r2) / det
			thdd = (a11*r2 - a12*r1) / det
			if bumper(thdd) {
				thdd = 0
				xdd = r1 / a11
			}
			iPsi := iPsi0 + p.WheelInertia*W*W/(2*r*r)
			psidd = (W/(2*r)*(net[Right]-net[Left]) - p.YawFriction*x[sYawRate]) / iPsi
		} else {
			// Each contact force is F_k = c_k + dx_k·ẍ + dψ_k·ψ̈: a rolling
			// wheel's from its own inertia, a sliding one's μ·N against
			// the slip.
			var c, dxk, dpk [2]float64
			for k := 0; k < 2; k++ {
				if sliding[k] {
					c[k] = mu[k] * nk * sign[k]
					continue
				}
				c[k] = net[k] / r
				dxk[k] = -p.WheelInertia / (r * r)
				dpk[k] = -p.WheelInertia * side[k] * W / (2 * r * r)
			}
			// [m11 m12 m13; m12 a22 0; m31 0 m33]·(ẍ, θ̈, ψ̈) = (q1, r2, q3)
			m11 := M + 2*p.WheelMass - dxk[0] - dxk[1]
			m13 := -(dpk[0] + dpk[1])
			m31 := -W / 2 * (dxk[1] - dxk[0])
			m33 := iPsi0 - W/2*(dpk[1]-dpk[0])
			q1 := M*l*sta*thd*thd + ft - (M+2*p.WheelMass)*gs + c[0] + c[1]
			q3 := W/2*(c[1]-c[0]) - p.YawFriction*x[sYawRate]
			det := m11*a22*m33 - a12*a12*m33 - m13*a22*m31
			xdd = (q1*a22*m33 - a12*r2*m33 - m13*a22*q3) / det
			thdd = (m11*r2*m33 - q1*a12*m33 + a12*m13*q3 - m13*r2*m31) / det
			psidd = (m11*a22*q3 - a12*a12*q3 - m31*(q1*a22-a12*r2)) / det
			if bumper(thdd) {
				thdd = 0
				det2 := m11*m33 - m13*m31
				xdd = (q1*m33 - m13*q3) / det2
				psidd = (m11*q3 - m31*q1) / det2
			}
		}
		// A rolling wheel whose grip the floor cannot give starts to slide
		// the way the motor pushes it.
		changed := false
		for k := 0; k < 2 && pass < 2; k++ {
			if sliding[k] || p.WheelInertia <= 0 {
				continue
			}
			if f := rollingForce(k, xdd, psidd); math.Abs(f) > mu[k]*nk {
				// Driven forward (f > 0), the wheel spins ahead of the
				// ground, and the floor's force stays forward.
				sliding[k], sign[k], changed = true, math.Copysign(1, f), true
			}
		}
		if !changed {
			break
		}
	}
	for k := 0; k < 2; k++ {
		a := (xdd + side[k]*psidd*W/2) / r
		if sliding[k] {
			b.contact[k] = mu[k] * nk * sign[k]
			a = (net[k] - b.contact[k]*r) / p.WheelInertia
		} else {
			b.contact[k] = rollingForce(k, xdd, psidd)
		}
		d[sOmegaL+k] = a
		d[sPhiL+k] = omega[k]
	}
	b.slip = sliding
	d[sX] = x[sV]
	d[sV] = xdd
	d[sPitch] = thd
	d[sPitchRate] = thdd
	d[sYaw] = x[sYawRate]
	d[sYawRate] = psidd
	d[sPosX] = x[sV] * yc
	d[sPosY] = x[sV] * ys
	if len(b.bumps) > 0 {
		// The travel is along the floor; over it, only cos α of it.
		_, ca, _ := b.ground(x, yc)
		d[sPosX] *= ca
		d[sPosY] *= ca
	}
}

// Step implements world.Model.
func (b *Balance) Step(dt float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	n := ode.Substeps(dt, 1e-3)
	h := dt / float64(n)
	for k := 0; k < n; k++ {
		before := [2]float64{b.slipSpeed(Left), b.slipSpeed(Right)}
		b.rk.Step(b.deriv, 0, b.x[:], h)
		// A slip that reversed or died out within the step has ended: the
		// wheel grips again (the next evaluation decides whether it holds).
		for w := 0; w < 2; w++ {
			if s := b.slipSpeed(w); math.Abs(s) < slipSnap || s*before[w] < 0 {
				b.x[sOmegaL+w] = b.groundSpeed(w) / b.p.WheelRadius
			}
		}
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

// groundSpeed is the speed of wheel w's axle over the floor along the
// heading, m/s.
func (b *Balance) groundSpeed(w int) float64 {
	side := float64(2*w - 1)
	return b.x[sV] + side*b.x[sYawRate]*b.p.WheelBase/2
}

// slipSpeed is how much faster wheel w's rim moves than its axle over the
// floor, m/s: zero while it rolls.
func (b *Balance) slipSpeed(w int) float64 {
	return b.p.WheelRadius*b.x[sOmegaL+w] - b.groundSpeed(w)
}

// wheelX is wheel w's contact point's world x, m.
func (b *Balance) wheelX(w int) float64 {
	return b.x[sPosX] + float64(2*w-1)*math.Sin(b.x[sYaw])*b.p.WheelBase/2
}

// Slip returns a wheel's slip speed, m/s: r·ω (ω the wheel's absolute
// rate) less its axle's speed over the floor; positive when it spins ahead.
func (b *Balance) Slip(side int) float64 { return b.slipSpeed(side) }

// Sliding reports whether a wheel slid in the last step.
func (b *Balance) Sliding(side int) bool { return b.slip[side] }

// ContactForce returns the floor's force on a wheel along the heading
// and its normal force in the last step, N.
func (b *Balance) ContactForce(side int) (traction, normal float64) {
	return b.contact[side], b.normal[side]
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
	if len(b.bumps) > 0 {
		// The axle accelerates along the floor's slope and, over its
		// curvature, across it.
		sa, ca, kappa := b.ground(b.x[:], math.Cos(b.x[sYaw]))
		cen := kappa * b.x[sV] * b.x[sV]
		a[0] += b.dx[sV]*(ca-1) - cen*sa
		a[1] *= ca
		a[2] += b.dx[sV]*sa + cen*ca
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
	z, _, _ := b.FloorHeight(b.x[sPosX])
	return msg.SimBalance{
		X: b.x[sPosX], Y: b.x[sPosY], Pitch: b.x[sPitch], PitchRate: b.x[sPitchRate], Speed: b.x[sV],
		Yaw: b.x[sYaw], YawRate: b.x[sYawRate],
		Wheel:     [2]float64{b.WheelAngle(Left), b.WheelAngle(Right)},
		WheelRate: [2]float64{b.WheelRate(Left), b.WheelRate(Right)},
		Torque:    b.torque, Fallen: b.Fallen(), Accel: acc, Gyro: gyr,
		Slip:     [2]float64{b.slipSpeed(Left), b.slipSpeed(Right)},
		Friction: [2]float64{b.FrictionAt(b.wheelX(Left)), b.FrictionAt(b.wheelX(Right))},
		Z:        z,
	}
}
