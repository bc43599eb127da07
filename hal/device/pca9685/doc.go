// Package pca9685 drives an NXP PCA9685 16-channel, 12-bit PWM controller on
// I²C, the arms node's servo board, written against hal/i2c so that it runs
// on a Raspberry Pi and, unchanged, on the simulator's twin
// (sim/twin/pca9685).
//
// New puts the chip to sleep with register auto-increment on, sets MODE2 to
// totem-pole outputs, turns every channel full off through ALL_LED, writes
// PRE_SCALE for the requested frequency and wakes the oscillator. PRE_SCALE
// follows the datasheet (7.3.5):
//
//	prescale = round(osc / (4096 × freq)) − 1,   3 ≤ prescale ≤ 255
//
// so 50 Hz gives 121 and a real 50.03 Hz; pulse widths are converted to
// counts with the real frequency, not the asked one.
//
// Each channel has ON and OFF counts (0–4095) in a 4096-count period, or the
// full-on / full-off bits; SetCounts writes all four registers in one burst.
// SetPulse and SetDuty compute the counts, Channel returns a channel as a
// pwm.Pin so a hobby servo (hal/device/servo) runs on it as on a Pi pin.
//
// Changing the frequency needs the oscillator asleep; if channels were
// running the chip sets MODE1.RESTART and SetFrequency restarts them as the
// datasheet asks (7.3.1.1). The datasheet wants 500 µs between clearing
// SLEEP and writing RESTART; an I²C transaction at 400 kHz takes about 50
// µs, so the driver does not wait: callers on a real bus that need the
// outputs exact at that instant space the calls themselves.
//
// Reset sends the general-call software reset (SWRST), which resets every
// PCA9685 on the bus.
//
// Datasheet: NXP PCA9685 product data sheet rev 4.
package pca9685
