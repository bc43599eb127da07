// Package board describes the hardware a generic node runs on: its identity,
// the 40-pin header's pins with direction, state and owner, the peripherals
// found on its buses, and access to those buses. It is what an unadopted
// node reports in NodeGPIOStatus (spec: GPIO Status Reporting) and what a
// role claims pins from when it starts.
package board
