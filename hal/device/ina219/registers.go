package ina219

// The INA219's register map, as its datasheet names the registers: what
// the driver writes and reads. Every register is 16 bits, big-endian, behind
// a register pointer.

// Register pointers.
const (
	regConfig      = 0x00
	regShunt       = 0x01
	regBus         = 0x02
	regPower       = 0x03
	regCurrent     = 0x04
	regCalibration = 0x05
)
