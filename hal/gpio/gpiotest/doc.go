// Package gpiotest is a fake GPIO pin for tests and for the simulator.
//
// A Pin models the electrical line as well as the register: an input that no
// one drives reads what its pull resistor gives it, Set drives it from the
// outside (a button, an encoder, an RC receiver) and Release lets it float
// back. Edges are delivered to watchers synchronously, on the goroutine that
// called Set or Release, stamped with the time the test passed in, so a test
// that feeds a 1500 µs pulse gets a 1500 µs pulse back without ever waiting
// on the wall clock.
package gpiotest
