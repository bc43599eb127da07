package servo

import "github.com/saint-os/saint/sim/model/ode"

// DriveTorque returns the torque (N·m) the servo's drive gives at output
// angle theta (rad) and speed omega (rad/s) for its present command,
// limits and state (enabled, dead) — the law Step integrates. A model that
// integrates the servo's load itself (coupled joints) and an oracle that
// checks the mechanics against another simulator use it.
func (s *Servo) DriveTorque(theta, omega float64) float64 { return s.motorTorque(theta, omega) }

// MoveSetpoint moves a speed-limited setpoint towards the goal by dt's
// worth of travel, as Step does before integrating; a model that
// integrates the servo's load itself calls it once per step.
func (s *Servo) MoveSetpoint(dt float64) {
	if s.hasCmd && s.speedLim > 0 && dt > 0 {
		step := s.speedLim * dt
		s.setpoint += ode.Clamp(s.goal-s.setpoint, -step, step)
	}
}

// Place sets the output's angle (clamped to the hard stops, where a motion
// into a stop ends), speed and the drive's torque, as integrated by a
// model that moves the servo's load itself. Non-finite values are ignored.
func (s *Servo) Place(theta, omega, torque float64) {
	if !ode.Finite(theta, omega, torque) {
		return
	}
	if theta <= s.lo && omega < 0 || theta >= s.hi && omega > 0 {
		theta, omega = ode.Clamp(theta, s.lo, s.hi), 0
	}
	s.theta, s.omega, s.torque = theta, omega, torque
}
