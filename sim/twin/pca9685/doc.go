// Package pca9685 is a register-level twin of the NXP PCA9685 16-channel,
// 12-bit PWM controller on I²C (0x40 by default), the servo board of the arms
// node.
//
// It answers like the chip: MODE1 resets to 0x11 (SLEEP, ALLCALL), MODE2 to
// 0x04 (OUTDRV), PRE_SCALE to 0x1E (nominally 200 Hz, 196.9 Hz exactly), every LEDn_OFF_H to 0x10 (full
// off); the register pointer auto-increments only when MODE1's AI bit is
// set; PRE_SCALE can be written only while SLEEP is set; writes to
// ALL_LED_ON/OFF reach every channel. Outputs are off while the oscillator
// sleeps. The physics reads the result with Frequency, Duty and Pulse.
//
// Not modelled yet: the all-call and sub-addresses on the bus, the software
// reset general call, RESTART, EXTCLK, output inversion and OE.
//
// Datasheet: NXP PCA9685 product data sheet rev 4, section 7.3.
package pca9685
