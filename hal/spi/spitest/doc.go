// Package spitest holds fake SPI connections for driver tests, after
// periph.io/x/conn/v3/spi/spitest: Playback, a scripted conversation whose
// Close fails if the driver stopped short, and Record, which keeps what goes
// over a live connection.
//
// Playback and Record share their engine with the other bus fakes
// (hal/internal/conntest); this package gives only the operation and how a
// call matches it.
package spitest
