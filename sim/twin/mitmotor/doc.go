// Package mitmotor is the simulator's torque-controlled actuator speaking
// the MIT-mode CAN protocol (hal/device/mitmotor): it joins a CAN bus as
// one actuator id, answers every frame addressed to it with a reply to the
// host, obeys the enable, disable and zero frames, and runs the control
// law the actuator's firmware runs between commands,
//
//	τ = kp·(p_des − p) + kd·(v_des − v) + τ_ff, clamped to the torque range,
//
// on the executor at its own loop rate (Options.LoopPeriod). Until it is
// enabled, after a disable frame, and after Options.Timeout without a
// command (when set; the firmware's CAN timeout then zeroes kp, kd and
// τ_ff) it applies no torque. A command received while disabled is
// answered but not applied, as the firmware ignores commands outside motor
// mode.
//
// # Physics-facing API
//
// The twin keeps no motor physics: the joint model reports the output's
// angle and speed, and applies the torque the twin computed:
//
//	d.SetState(angle, velocity) // rad from the physical zero, rad/s, every physics step
//	tau := d.Torque()           // N·m the actuator applies, from its last loop
//
// The zero frame makes the present angle the actuator's zero: positions
// on the wire (and p in the law) are then measured from it. SetConnected
// (false) takes the actuator off the bus: it hears nothing and answers
// nothing, and keeps applying its last command as the firmware does (its
// CAN timeout, when set, still runs). Methods are safe for concurrent use.
//
// Protocol: not an independent reading. The twin encodes and decodes with
// the driver's functions (hal/device/mitmotor), whose golden tests check
// the layout against hand-packed frames; both ends agree by construction.
package mitmotor
