// Package rpi describes the Raspberry Pi's 40-pin header: which physical pin
// carries which BCM GPIO, the usual alternate function of each, and the pulls
// the SoC applies at power-on. Both the Pi backend and the simulated board
// report pins with it, so a node shows the same table on either.
//
// Reference: https://pinout.xyz and the BCM2711 ARM Peripherals datasheet,
// section 5.3 (GPIO alternative function assignments and reset pulls).
package rpi
