// Package uarttest holds fake serial ports for tests and for the simulator.
//
// A Port records what is written to it and delivers bytes to its receivers
// with the arrival time the test chooses (Inject), which is what protocol
// decoders need: SBUS and CRSF frames are told apart by the gaps between
// bursts. Pipe returns two ports wired back to back, TX to RX, for a driver
// on one end and a device twin (a Feetech servo bus, the balance IO board) on
// the other. Playback is a scripted conversation for driver tests (each
// write the driver must make and the device's answer), on the same engine
// as i2ctest's and spitest's (hal/internal/conntest).
// A simulation that runs for hours turns the record off
// (SetRecording(false)): the bytes still flow, nothing is kept.
package uarttest
