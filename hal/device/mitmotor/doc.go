// Package mitmotor drives quasi-direct-drive actuators that speak the "MIT
// mode" CAN protocol of the MIT Mini Cheetah motor controller (Ben Katz's
// firmware), which the CubeMars/T-Motor AK series, SteadyWin GIM and many
// other actuators implement: the host sends a position, a velocity, the
// gains kp and kd and a feed-forward torque, and the actuator runs
//
//	τ = kp·(p_des − p) + kd·(v_des − v) + τ_ff
//
// in its own current loop, clamped to its torque range, until the next
// command.
//
// # Wire format
//
// Classic CAN, 1 Mbit/s, 11-bit standard ids. A command goes to id = the
// actuator's id, 8 bytes, every value an unsigned integer scaled linearly
// over the model's range (Range.Encode), most significant bits first:
//
//	byte 0    1    2    3         4    5    6         7
//	     p[15:8] p[7:0] v[11:4] v[3:0]|kp[11:8] kp[7:0] kd[11:4] kd[3:0]|t[11:8] t[7:0]
//
// p is 16 bits, v, kp, kd and t 12 bits. Three special frames, seven FF
// bytes and a last byte, switch the actuator's state:
//
//	FF FF FF FF FF FF FF FC   enter motor mode (enable)
//	FF FF FF FF FF FF FF FD   exit motor mode (disable: no torque)
//	FF FF FF FF FF FF FF FE   make the present position zero
//
// The actuator answers every frame addressed to it with a reply to the
// host's id (0 by default), 6 bytes: its own id, then 16-bit position,
// 12-bit velocity and 12-bit torque (the AK series and its manual call it
// current; scaled over the torque range either way):
//
//	byte 0    1      2      3       4               5
//	     id   p[15:8] p[7:0] v[11:4] v[3:0]|t[11:8] t[7:0]
//
// CubeMars firmware appends two bytes (8 in all): the driver temperature in
// °C + 40 and an error code; Reply carries them when present.
//
// The ranges are not on the wire: both ends must be configured with the
// same ones. Model lists those of common actuators; docs/devices-motors.md
// has the table.
//
// # Use
//
// Motor sends commands to one actuator and keeps its latest reply, stamped
// with its arrival time. The encoding (Model.EncodeCommand, Model.DecodeReply
// and their inverses) is exported so that the simulator's twin
// (sim/twin/mitmotor) and tests speak the same format.
package mitmotor
