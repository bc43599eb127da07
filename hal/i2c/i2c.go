package i2c

// Bus is an I²C bus. Addresses are 7-bit.
type Bus interface {
	// Tx writes w to the device at addr, then reads len(r) bytes into r, in
	// one transaction with a repeated start. Either may be empty. A device
	// that does not acknowledge its address yields an error.
	Tx(addr uint16, w, r []byte) error
}
