// Package feetech is the simulator's Feetech smart-servo bus: several STS or
// SCS servos on the device end of a UART (a uarttest.Pipe end, or
// simboard's UARTPeer), answering the driver in hal/device/feetech byte for
// byte as the servos would.
//
// Each Servo holds the servo's control table. PING, READ, WRITE,
// REG_WRITE/ACTION, SYNC_WRITE and SYNC_READ act on it; a servo answers a
// packet addressed to its id with a status packet (READ and PING always,
// the rest while RegStatusReturnLevel is 1, its default). Broadcasts get no
// answer, except SYNC_READ (the servos it lists answer in its order) and
// PING, which every servo answers in id order (on a real bus they would
// collide unless only one is connected: the way setup tools find an
// unknown id). Bytes with a bad checksum, garbage, instructions the
// servos do not know and malformed parameters get no answer; the parser
// resynchronises on the next 0xFF 0xFF and drops a partial packet after
// FrameGap of silence on the line.
//
// # Physics-facing API
//
// The model of each servo reads what the controller asked for and writes
// back what the servo measures:
//
//	s := bus.Servo(1)
//	g := s.Goal()                 // Position (steps, clamped to the angle limits), Speed, Time, Acceleration, Torque
//	rad := model.Radians(g.Position)
//	s.SetPresent(feetech.Present{Position: ..., Speed: ..., Load: ..., Voltage: 7.4, Temperature: 31, Moving: true})
//
// Units are the servo's (steps, steps/s, 0.1 % of maximum torque); Model
// converts positions to and from radians. RegOffset, the STS position correction,
// shifts the reported position and the goal as the servo's zero
// calibration does; RegTorqueLimit is the run-time torque limit (the
// lower of it and RegMaxTorque limits the torque). SetConnected(false) unplugs a
// servo and SetError sets the error byte its status packets carry
// (overheat, overload ...). Methods are safe for concurrent use; answers are
// written on the goroutine that delivered the request, so on a Pipe a
// driver's request is answered before its Write returns.
//
// Control table: not an independent reading. The twin takes the control
// table addresses and the packet codec from the driver (hal/device/feetech)
// so that both ends agree by construction; what checks them apart from the
// twin is the driver's golden tests, whose request bytes are worked out by
// hand from the packet format rather than produced by the codec.
package feetech
