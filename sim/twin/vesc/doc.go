// Package vesc is the simulator's VESC motor controller on a CAN bus: it
// obeys the commands the driver in hal/device/vesc sends to its controller
// id (or to 255, every controller) and broadcasts STATUS, STATUS_4 and
// STATUS_5 at a fixed rate of the executor's clock, byte for byte as the
// VESC firmware does.
//
// Standard frames, remote frames, frames for other controllers, payloads
// shorter than four bytes and commands it does not know are ignored. With
// no command for Options.Timeout (the firmware's timeout_msec, 1 s by
// default) it stops driving the motor: the command becomes Off, or a brake
// at Options.TimeoutBrakeCurrent when that is set, as the firmware does.
//
// # Physics-facing API
//
// The motor model reads what the VESC is told to do and reports what the
// motor does; the twin keeps no motor physics of its own:
//
//	cmd := v.Command()     // Mode (Off, Duty, Current, Brake, RPM, Pos) and Value (fraction, A, ERPM, degrees)
//	v.SetState(vesc.State{ERPM: ..., MotorCurrent: ..., InputCurrent: ..., Duty: ...,
//		InputVoltage: 36.6, TempFET: 35, TempMotor: 40, Tachometer: ..., PIDPos: ...})
//
// SetConnected(false) takes the controller off the bus (no status, commands
// unheard). Methods are safe for concurrent use.
//
// Protocol: not an independent reading. The twin takes the command ids, the
// scale factors and the frame id layout from the driver (hal/device/vesc),
// which follows the VESC firmware's comm_can.c; both ends agree by
// construction, so the twin does not check the driver's reading of that
// source.
package vesc
