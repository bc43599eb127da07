// Package motor is the arm's motor middleware, after the pi-plus software
// system's hightorque_midware: clients never drive motors directly, they
// ask for control (request_control → a session uuid), send commands that
// carry the uuid (control_command: POSITION, TORQUE or MIXED with kp/kd),
// and release it (release_control); a session that goes quiet times out.
// On release or timeout the motors keep the last command (KEEP_MODE), are
// damped (DAMPING_MODE) or lose their torque (ZERO_TORQUE_MODE).
// reset_zero makes the motors' present positions their zero.
//
// The joint table is joints.yaml (ParseJoints): joint names, motor ids,
// directions, clamping limits, default gains, URDF offsets and the power
// budget; its errors name the line and the field.
//
// The package holds the logic only. The role that owns the motors polls
// them, hands their feedback to Middleware.Update every control period and
// applies the outputs it gets back while the middleware owns the motors.
// On torque-controlled actuators (Options.TorqueControlled, MIT-mode CAN)
// an output is the actuator's own law, τ = kp·(q_des − q) + kd·(dq_des − dq)
// + τ_ff, which it runs between commands: every mode and behaviour is
// honoured. On position servos (Feetech STS) only POSITION without gains,
// KEEP_MODE and ZERO_TORQUE_MODE can be; the rest is refused with the
// reason rather than imitated.
package motor
