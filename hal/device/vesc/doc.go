// Package vesc commands VESC motor controllers over CAN and decodes the
// status they broadcast, following vedderb/bldc comm/comm_can.c.
//
// # Wire format
//
// Classic CAN at 500 kbit/s, 29-bit extended ids: id = command<<8 |
// controller id (255 addresses every controller). Payloads are big-endian.
//
//	SET_DUTY           0  int32 duty × 100000
//	SET_CURRENT        1  int32 motor current A × 1000
//	SET_CURRENT_BRAKE  2  int32 brake current A × 1000
//	SET_RPM            3  int32 electrical RPM
//	SET_POS            4  int32 degrees × 1000000
//	STATUS             9  int32 ERPM, int16 motor current A × 10, int16 duty × 1000
//	STATUS_4          16  int16 FET °C × 10, int16 motor °C × 10, int16 input A × 10, int16 PID position ° × 50
//	STATUS_5          27  int32 tachometer, int16 input V × 10, int16 0
//
// Example: 51 A to VESC 23 is id 0x00000117, data 00 00 C7 38.
//
// A VESC releases its motor when no command arrives within its timeout
// (app configuration, 1 s by default), so a controller must repeat its
// command faster than that.
//
// Controller sends commands to one VESC and keeps the latest telemetry it
// broadcasts, each message stamped with its arrival time. The SAUL-TEE
// balancing base drives VESC 68 (left) and 56 (right). sim/twin/vesc is the
// simulator's VESC.
package vesc
