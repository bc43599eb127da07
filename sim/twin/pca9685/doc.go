// Package pca9685 is a register-level twin of the NXP PCA9685 16-channel,
// 12-bit PWM controller on I²C (0x40 by default), the servo board of the arms
// node.
//
// It answers like the chip: MODE1 resets to 0x11 (SLEEP, ALLCALL), MODE2 to
// 0x04 (OUTDRV), PRE_SCALE to 0x1E (nominally 200 Hz, 196.9 Hz exactly), every LEDn_OFF_H to 0x10 (full
// off); the register pointer auto-increments only when MODE1's AI bit is
// set; PRE_SCALE can be written only while SLEEP is set; writes to
// ALL_LED_ON/OFF reach every channel. Outputs are off while the oscillator
// sleeps. Going to sleep with a channel running sets MODE1.RESTART (read
// back as 1); after waking, outputs stay off until RESTART is written 1, as
// the datasheet's restart procedure says (7.3.1.1). MODE2.INVRT inverts the
// outputs. The general call's software reset (SWRST, 0x06 to address 0x00,
// GeneralCall) restores the power-on values. Reserved registers
// (0x46–0xF9) read 0 and ignore writes. The physics reads the result with
// Frequency, Duty, Pulse and Pulses; channels outside 0–15 read 0.
//
// Not modelled: the all-call and sub-addresses on the bus, EXTCLK, OE and
// the 500 µs oscillator start-up.
//
// Datasheet: NXP PCA9685 product data sheet rev 4, section 7.3.
//
// Register map: the twin's own reading of the datasheet, kept apart from the
// driver's. The twin defines its registers, reset values and bit meanings
// itself and imports nothing from the driver (hal/device/pca9685, whose map
// is in its registers.go), so a driver test against the twin checks one
// reading against the other; a mistake both readings share would pass.
package pca9685
