package spi

// Conn is a connection to one SPI device (one chip select), already
// configured for clock speed and mode.
type Conn interface {
	// Tx clocks out w and clocks in r at the same time; len(r) is 0 or
	// len(w).
	Tx(w, r []byte) error
}
