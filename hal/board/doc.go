// Package board describes the hardware a generic node runs on: its identity,
// the 40-pin header's pins with direction, state and owner, the peripherals
// found on its buses, and access to those buses. It is what an unadopted
// node reports in NodeGPIOStatus (docs/api.md) and what a
// role claims pins from when it starts.
//
// Package rpi holds the Raspberry Pi header table (physical pin ↔ BCM GPIO);
// boardtest is an in-memory Board for tests. The simulated Raspberry Pi is
// sim/board.
package board
