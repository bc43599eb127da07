// Package ioboard is the simulator's saul-tee IO board: the IO-board logic
// (hal/device/ioboard, unchanged) on a simulated microcontroller whose
// wires are the simulator's. Its inter-board UART is the far end of the
// balance board's ttyAMA0 (simboard.Board.UARTPeer); its two RC receivers
// are rctx transmitters sending CRSF (the TBS Crossfire, primary, address
// 0xC8) and CRSF from an ELRS receiver (failover, address 0xEE) on
// simulated UARTs; the arming button (IO9, active low) and the kill switch
// sense (IO10, a normally closed switch to ground, high when open) are test
// pins a test presses and opens.
//
// Both transmitters are held by the same pilot: SetChannel moves a stick
// on both, and each link can be lost on its own (CRSF().SetLinkLost).
package ioboard
