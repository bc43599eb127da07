package servo

import (
	"math"

	"github.com/saint-os/saint/sim/model/ode"
)

// kgcm is one kilogram-force centimetre in N·m.
const kgcm = 0.0980665

// Valid signal window: outside it the controller sees no command.
const (
	MinValidPulseUS = 300
	MaxValidPulseUS = 2800
	MinFrameHz      = 20
	MaxFrameHz      = 500
)

// maxSubstep bounds the integration substep, s.
const maxSubstep = 5e-4

// Params describe a servo. Angles in radians, the output shaft's.
type Params struct {
	MinPulseUS, MaxPulseUS float64 // pulse range mapped onto Travel, µs
	Travel                 float64 // angle swept from MinPulse to MaxPulse, rad
	DeadbandUS             float64 // pulse change that moves the output, µs
	StallTorque            float64 // τₛ, N·m
	NoLoadSpeed            float64 // ω₀, rad/s
	FullDriveError         float64 // Eₛ: error giving full drive, rad
	RotorInertia           float64 // J: motor and gears seen at the output, kg·m²
	MinAngle, MaxAngle     float64 // hard stops, rad (both 0: ±Travel/2)
}

// MG996R is a standard metal-gear hobby servo, 180° travel, at 4.8 V.
func MG996R() Params {
	return Params{
		MinPulseUS: 500, MaxPulseUS: 2500, Travel: math.Pi, DeadbandUS: 5,
		StallTorque: 9.4 * kgcm, NoLoadSpeed: math.Pi / 3 / 0.17,
		FullDriveError: 3 * math.Pi / 180, RotorInertia: 2e-3,
	}
}

// SG90 is a micro hobby servo, 180° travel, at 4.8 V.
func SG90() Params {
	return Params{
		MinPulseUS: 500, MaxPulseUS: 2500, Travel: math.Pi, DeadbandUS: 10,
		StallTorque: 1.8 * kgcm, NoLoadSpeed: math.Pi / 3 / 0.1,
		FullDriveError: 4 * math.Pi / 180, RotorInertia: 2e-4,
	}
}

// STS3215 is a Feetech smart servo (360° magnetic encoder) at 7.4 V. Its
// position comes over the bus; the pulse fields map 500–2500 µs onto the
// full turn for completeness.
func STS3215() Params {
	return Params{
		MinPulseUS: 500, MaxPulseUS: 2500, Travel: 2 * math.Pi, DeadbandUS: 1,
		StallTorque: 19.5 * kgcm, NoLoadSpeed: math.Pi / 3 / 0.222,
		FullDriveError: 2 * math.Pi / 180, RotorInertia: 4e-3,
	}
}

// Servo is one servo and the load on its output.
type Servo struct {
	p         Params
	lo, hi    float64 // hard stops
	hasCmd    bool    // a valid command is present
	goal      float64 // commanded angle, rad
	setpoint  float64 // goal as the speed limit lets it move, rad
	speedLim  float64 // rad/s, 0 = none
	torqueLim float64 // fraction of stall, 0–1
	enabled   bool
	dead      bool
	// direct: a torque-controlled actuator drives the output with
	// directTau instead of the servo's position loop.
	direct    bool
	directTau float64

	theta, omega float64
	torque       float64 // motor torque at the output, last step, N·m
	pulse        float64 // last valid pulse, µs (0 = none)
}

// New returns a servo at angle 0 with no command. Invalid parameters take
// the MG996R's.
func New(p Params) *Servo {
	d := MG996R()
	pos := func(v *float64, def float64) {
		if !(*v > 0) || math.IsInf(*v, 0) {
			*v = def
		}
	}
	pos(&p.Travel, d.Travel)
	pos(&p.StallTorque, d.StallTorque)
	pos(&p.NoLoadSpeed, d.NoLoadSpeed)
	pos(&p.FullDriveError, d.FullDriveError)
	pos(&p.RotorInertia, d.RotorInertia)
	if !(p.MaxPulseUS > p.MinPulseUS) || !ode.Finite(p.MinPulseUS, p.MaxPulseUS) {
		p.MinPulseUS, p.MaxPulseUS = d.MinPulseUS, d.MaxPulseUS
	}
	if !(p.DeadbandUS >= 0) || math.IsInf(p.DeadbandUS, 0) {
		p.DeadbandUS = 0
	}
	s := &Servo{p: p, lo: p.MinAngle, hi: p.MaxAngle, torqueLim: 1, enabled: true}
	if !(s.hi > s.lo) || !ode.Finite(s.lo, s.hi) {
		s.lo, s.hi = -p.Travel/2, p.Travel/2
	}
	return s
}

// Params returns the servo's parameters.
func (s *Servo) Params() Params { return s.p }

// SetPWM sets the command from a PWM output: frequency (Hz), duty (0–1)
// and whether it runs. The pulse is duty/frequency.
func (s *Servo) SetPWM(freqHz, duty float64, on bool) {
	if !on || !(freqHz >= MinFrameHz && freqHz <= MaxFrameHz) || !ode.Finite(duty) {
		s.release()
		return
	}
	s.SetPulse(duty / freqHz * 1e6)
}

// SetPulse sets the command from a pulse width in µs. A pulse outside the
// valid window releases the servo.
func (s *Servo) SetPulse(us float64) {
	if !(us >= MinValidPulseUS && us <= MaxValidPulseUS) {
		s.release()
		return
	}
	s.pulse = us
	us = ode.Clamp(us, s.p.MinPulseUS, s.p.MaxPulseUS)
	s.command(s.AngleForPulse(us))
}

// AngleForPulse maps a pulse (µs) onto the output angle it commands.
func (s *Servo) AngleForPulse(us float64) float64 {
	mid := (s.p.MinPulseUS + s.p.MaxPulseUS) / 2
	return (us - mid) / (s.p.MaxPulseUS - s.p.MinPulseUS) * s.p.Travel
}

// SetGoal commands an angle directly (rad), as a smart servo's goal
// position register does. Non-finite goals are ignored.
func (s *Servo) SetGoal(rad float64) {
	if !ode.Finite(rad) {
		return
	}
	s.pulse = 0
	s.command(rad)
}

func (s *Servo) command(rad float64) {
	if !s.hasCmd {
		s.setpoint = s.theta
	}
	s.goal, s.hasCmd = ode.Clamp(rad, s.lo, s.hi), true
	if s.speedLim == 0 {
		s.setpoint = s.goal
	}
}

func (s *Servo) release() { s.hasCmd, s.pulse = false, 0 }

// Release removes the command: the output goes limp.
func (s *Servo) Release() { s.release() }

// SetSpeedLimit limits how fast the setpoint moves towards the goal
// (rad/s); 0 or less means no limit.
func (s *Servo) SetSpeedLimit(radPerS float64) {
	if !(radPerS > 0) || math.IsInf(radPerS, 0) {
		radPerS = 0
		s.setpoint = s.goal
	}
	s.speedLim = radPerS
}

// SetTorqueLimit limits the drive to a fraction (0–1) of stall torque.
func (s *Servo) SetTorqueLimit(fraction float64) {
	if ode.Finite(fraction) {
		s.torqueLim = ode.Clamp(fraction, 0, 1)
	}
}

// SetTorqueEnabled switches the drive; disabled, the output is limp.
func (s *Servo) SetTorqueEnabled(on bool) { s.enabled = on }

// SetDirectTorque makes the output a torque-controlled actuator (on true):
// the drive is tau N·m, clamped to ±StallTorque, instead of the position
// loop's, with no back-EMF fall-off (the actuator's current loop makes up
// for it). Torque enable and death still cut it. false returns to the
// position loop. Non-finite torques count as 0.
func (s *Servo) SetDirectTorque(on bool, tau float64) {
	if !ode.Finite(tau) {
		tau = 0
	}
	s.direct, s.directTau = on, tau
}

// SetDead kills (true) or revives the servo: a dead servo gives no torque.
func (s *Servo) SetDead(dead bool) { s.dead = dead }

// SetAngle places the output at rad, at rest (initial conditions).
func (s *Servo) SetAngle(rad float64) {
	if ode.Finite(rad) {
		s.theta, s.omega = ode.Clamp(rad, s.lo, s.hi), 0
		s.setpoint = s.theta
	}
}

// Angle returns the output angle, rad.
func (s *Servo) Angle() float64 { return s.theta }

// Rate returns the output speed, rad/s.
func (s *Servo) Rate() float64 { return s.omega }

// Torque returns the motor's torque at the output in the last step, N·m:
// the effort a smart servo reports as its load.
func (s *Servo) Torque() float64 { return s.torque }

// Goal returns the commanded angle and whether there is a command.
func (s *Servo) Goal() (float64, bool) { return s.goal, s.hasCmd }

// Pulse returns the last valid pulse in µs, 0 when none.
func (s *Servo) Pulse() float64 { return s.pulse }

// Limits returns the hard stops, rad.
func (s *Servo) Limits() (lo, hi float64) { return s.lo, s.hi }

// motorTorque is the drive at angle theta, speed omega.
func (s *Servo) motorTorque(theta, omega float64) float64 {
	if s.dead || !s.enabled {
		return 0
	}
	if s.direct {
		return ode.Clamp(s.directTau, -s.p.StallTorque, s.p.StallTorque)
	}
	brake := s.p.StallTorque / s.p.NoLoadSpeed * omega
	if !s.hasCmd {
		return 0
	}
	e := s.setpoint - theta
	db := s.p.DeadbandUS / 2 / (s.p.MaxPulseUS - s.p.MinPulseUS) * s.p.Travel
	d := ode.Clamp(deadband(e, db)/s.p.FullDriveError, -1, 1)
	lim := s.p.StallTorque * s.torqueLim
	return ode.Clamp(s.p.StallTorque*d*s.torqueLim-brake, -lim, lim)
}

// Step advances the servo and its load by dt: loadInertia (kg·m²) is what
// the output drives besides the rotor, friction (N·m·s/rad) the load's
// viscous friction, extTorque (N·m) what else acts on it (gravity).
func (s *Servo) Step(dt, loadInertia, friction, extTorque float64) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return
	}
	if !(loadInertia >= 0) || math.IsInf(loadInertia, 0) {
		loadInertia = 0
	}
	if !(friction >= 0) || math.IsInf(friction, 0) {
		friction = 0
	}
	if !ode.Finite(extTorque) {
		extTorque = 0
	}
	if s.hasCmd && s.speedLim > 0 {
		step := s.speedLim * dt
		s.setpoint += ode.Clamp(s.goal-s.setpoint, -step, step)
	}
	j := s.p.RotorInertia + loadInertia
	n := ode.Substeps(dt, maxSubstep)
	h := dt / float64(n)
	for i := 0; i < n; i++ {
		s.torque = s.motorTorque(s.theta, s.omega)
		s.omega += h * (s.torque - friction*s.omega + extTorque) / j
		s.theta += h * s.omega
		if s.theta <= s.lo && s.omega < 0 || s.theta >= s.hi && s.omega > 0 {
			s.theta, s.omega = ode.Clamp(s.theta, s.lo, s.hi), 0
		}
	}
}

// deadband is the error the drive acts on: none within ±db, rising from
// zero at the deadband's edge to the whole error at twice the deadband,
// the error itself beyond. A real servo's drive does not jump to e/Eₛ at
// the edge either: its PWM output starts from its minimum and its motor
// from standstill. A step there would leave a load between off and the
// first step with no equilibrium, and the output would hunt across the
// edge for ever.
func deadband(e, db float64) float64 {
	a := math.Abs(e)
	switch {
	case a <= db:
		return 0
	case a >= 2*db:
		return e
	}
	return math.Copysign(2*(a-db), e)
}
