// Package rctx is the simulator's RC transmitter together with the receiver
// bound to it: stick and switch positions in, the receiver's output on the
// wire out, exactly as a hobby receiver would put it on the server's pins.
//
// Serial sends SBUS, IBUS or CRSF frames on a uart.Port (the device end of a
// simulated UART, a uarttest.Pipe end) at the protocol's real frame rate,
// with CRSF link statistics whose RSSI and link quality a test sets. PPM
// drives a PPM sum signal on one line; PWM drives one servo pulse per
// channel on its own line. Lines are driven from outside the board, as a
// receiver's output would: a gpiotest.Pin is a Line, and BoardLine adapts a
// simulated board's SetInput.
//
// Everything runs on the executor: frames and edges are timer callbacks, so
// under a virtual clock every byte and every edge is stamped with its exact
// time (an edge of a 1500 µs pulse falls exactly 1500 µs after its rise).
// There are no goroutines and no sleeps.
//
// Fault injection is what a flight test would see: SetLinkLost stops the
// receiver's output (the transmitter switched off or out of range) or, for
// an SBUS receiver with SerialOptions.SBUSFailsafeAfter, turns it into
// frame-lost and then failsafe frames as most SBUS receivers do; SetFlags
// raises SBUS's flags by hand; SetNoise puts random bytes on the line
// between frames.
//
// Wire formats are hal/device/rc's encoders; the server's RC receiver reads
// this twin's output with hal/device/rc's decoders.
package rctx
