// Package feetech drives Feetech STS and SCS smart servos on their
// half-duplex serial bus (1 Mbaud, 8N1 by default).
//
// # Wire format
//
// Every packet is
//
//	0xFF 0xFF ID LEN INSTR PARAM... CHECKSUM
//
// where LEN counts INSTR, the parameters and the checksum (params + 2) and
// CHECKSUM = ^(ID + LEN + INSTR + params) & 0xFF. A servo answers with a
// status packet of the same shape whose INSTR byte is its error byte
// (ErrVoltage, ErrOverheat, ErrOverload ...). ID 0xFE (Broadcast) reaches
// every servo; no servo answers a broadcast except a PING, and a SYNC_READ,
// which the servos it lists answer one after the other. Instructions:
// PING 0x01, READ 0x02 (addr, n), WRITE 0x03 (addr, data...), REG_WRITE 0x04
// and ACTION 0x05 (a write armed now, applied on ACTION), SYNC_READ 0x82 (STS
// only; addr, n, ids...), SYNC_WRITE 0x83 (addr, n, then id + n bytes per
// servo).
//
// Example, PING servo 1 and its answer (no error):
//
//	FF FF 01 02 01 FB  →  FF FF 01 02 00 FC
//
// # Registers
//
// Both families share the control table addresses (RegTorqueEnable 40,
// RegGoalPosition 42, RegGoalTime 44, RegGoalSpeed 46, RegPresentPosition 56,
// RegPresentSpeed 58, RegPresentLoad 60, RegPresentVoltage 62,
// RegPresentTemperature 63, RegMoving 66). They differ in byte order and
// resolution (Model): STS servos are little-endian with 4096 steps per turn;
// SCS servos are big-endian with 1024 steps over about 300°. Signed values
// are sign-magnitude: bit 15 is the sign of a speed (and of an STS
// position), bit 10 the sign of a load, whose magnitude is in 0.1 % of the
// maximum torque.
//
// # Driver
//
// Bus runs on an executor. The bus is half-duplex, so transactions are
// queued and put on the line one at a time; each waits for its status packet
// up to Options.Timeout, measured on the executor's clock, and calls its
// done function on the executor. Received bytes come from the port's reader
// goroutine and are posted into the executor. Bytes are checked as they
// arrive: packets with a bad checksum and bytes that are not a packet are
// dropped and the parser resynchronises on the next 0xFF 0xFF; a line that
// echoes what the driver sent (a single-wire bus without a direction switch)
// is tolerated, the echo being skipped.
//
// sim/twin/feetech is the servo bus the simulator puts on the other end of
// the line.
package feetech
