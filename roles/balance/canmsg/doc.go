// Package canmsg encodes and decodes the saul-tee base's own CAN frames,
// the ones the Orin and the balance board exchange on the VESCs' 500 kbit/s
// bus:
//
//	0x300 Orin → BALANCE  Velocity   int16 speed_mmps, int16 steer_mrad
//	0x301 Orin → BALANCE  PID tuning float32 Kp, Ki, Kd (IEEE-754)
//	0x302 Orin → BALANCE  Mode       uint8 (0 off, 1 balance, 2 manual, 3 estop)
//	0x303 Orin → BALANCE  Config     uint16 tilt_limit_x100, uint16 max_speed_mmps
//	0x400 BALANCE → Orin  TelemetryA int16 pitch_x100, int16 pid_out, int16 speed_mmps, uint8 state
//	0x401 BALANCE → Orin  TelemetryB int16 vesc_l_rpm, int16 vesc_r_rpm, uint16 battery_mv, uint8 faults
//
// The frames use standard (11-bit) identifiers, which keeps them apart
// from the VESCs' extended ones, and little-endian fields, the native order
// of the ESP32-S3 and the Orin.
//
// The PID tuning message is 12 bytes, more than a classic CAN frame holds,
// so it travels as two 0x301 frames in order: an 8-byte frame with Kp and
// Ki, then a 4-byte frame with Kd (the 12 bytes of the table cut at the
// 8-byte boundary). PIDAssembler puts them back together; a Kd frame
// without a Kp/Ki frame before it is refused.
package canmsg
