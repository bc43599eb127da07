// Package i2ctest holds fake I²C buses for driver tests, after
// periph.io/x/conn/v3/i2c/i2ctest.
//
// Playback is a scripted conversation: each transaction the driver is
// expected to make, with the bytes the chip answers. A driver test written
// with it reads like the datasheet's register map, and Close fails if the
// driver stopped short of the script. Record wraps a live bus (the
// simulator's, or real hardware) and keeps the conversation, ready to be
// pasted into a Playback. RegMap is a chip with 256 8-bit registers behind a
// register pointer, the layout most I²C sensors share.
//
// Playback and Record share their engine with the other bus fakes
// (hal/internal/conntest); this package gives only the operation and how a
// call matches it.
package i2ctest
