package pca9685

// The PCA9685's register map, the registers and bits the driver uses, named
// as the datasheet names them.

// Registers.
const (
	regMode1     = 0x00
	regMode2     = 0x01
	regLED0OnL   = 0x06
	regAllLEDOnL = 0xFA
	regPreScale  = 0xFE
)

// Bits.
const (
	mode1Restart = 0x80
	mode1AI      = 0x20
	mode1Sleep   = 0x10
	mode1AllCall = 0x01
	mode2OutDrv  = 0x04
	fullBit      = 0x1000 // bit 4 of LEDn_ON_H / LEDn_OFF_H as a 16-bit count
	swReset      = 0x06
)
