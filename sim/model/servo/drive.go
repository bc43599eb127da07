package servo

// DriveTorque returns the torque (N·m) the servo's drive gives at output
// angle theta (rad) and speed omega (rad/s) for its present command,
// limits and state (enabled, dead) — the law Step integrates. A model that
// integrates the servo's load itself (coupled joints) and an oracle that
// checks the mechanics against another simulator use it.
func (s *Servo) DriveTorque(theta, omega float64) float64 { return s.motorTorque(theta, omega) }
