// Package i2cid names the chip that answers at an I²C address, the way a
// person reading i2cdetect's output would: by address range and by a few
// identification registers only that chip would hold those values in.
//
// Both boards use it: the real Raspberry Pi board (hal/board/pi) when a
// node reports its peripherals before adoption, and the simulated board
// (sim/board), whose twins answer the same probes. Each probe is one
// register-pointer write and one read, harmless to every chip tried.
package i2cid
