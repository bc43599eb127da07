// Package ioboard is the firmware of the saul-tee IO board, the
// microcontroller beside the balance board that owns the RC receivers, the
// arming button, the kill switch and the inter-board link (package link
// below, the protocol both boards speak). It sits under hal/device because,
// seen from a node, the IO board is a device on the balance board's UART,
// as a VESC is one on its CAN bus; unlike a driver, this package is the
// device's own program, not the host's side of it. It is written against
// hal interfaces (uart.Port, gpio.PinIO) and one executor, so the same code
// runs on the IO microcontroller's stand-in and, in the simulator, on
// sim/twin/ioboard; the balance role (roles/balance) talks to it only
// through link.
//
// Every Period (10 ms) the board:
//
//   - picks its RC source: the TBS Crossfire receiver (CRSF, primary) while a
//     valid frame arrived within FailoverAfter (100 ms), else the ELRS
//     receiver (CRSF frames too, failover), else none: RC loss;
//   - reads the kill switch (a normally closed switch to ground with the
//     input pulled up: open or cut reads high, kill) and the RC ESTOP
//     channel (CH6 > 1500 µs); either is a kill;
//   - manages arming: the button (active low) held ArmHold (3 s) without
//     a break while the balance board reports itself upright (its STATE
//     pitch within UprightDeg and fresh), with the ARM switch (CH5 >
//     1500 µs) on and no kill or RC loss, latches "armed". A kill, RC loss,
//     the ARM switch off, or the balance board entering a fault state
//     clears the latch, so re-arming takes a new 3 s hold;
//   - sends RC_CMD: throttle (CH2) and steer (CH1) in per mille, throttle
//     scaled by the speed-limit channel (CH7, 10–100 % in 10 % steps), and
//     the armed and kill flags; with a FAULT frame too while a fault
//     (RC loss, estop) stands.
//
// A kill switch edge is acted on at once, not at the next period, when
// the pin reports edges (gpio.EdgeWatcher). Frames from the balance board
// (STATE, LED_CMD, BUZZER) are kept for Status.
package ioboard
