// Package spitest holds fake SPI connections for driver tests, after
// periph.io/x/conn/v3/spi/spitest: Playback, a scripted conversation whose
// Close fails if the driver stopped short, and Record, which keeps what goes
// over a live connection.
package spitest
