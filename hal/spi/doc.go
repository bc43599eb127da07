// Package spi defines an SPI device connection, after
// periph.io/x/conn/v3/spi. Fakes for tests are in spitest.
package spi
