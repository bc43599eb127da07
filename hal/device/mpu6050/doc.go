// Package mpu6050 drives an InvenSense MPU-6050 6-axis IMU (3-axis
// accelerometer, 3-axis gyroscope, temperature) on I²C, written against
// hal/i2c so that it runs on a Raspberry Pi and, unchanged, on the
// simulator's twin (sim/twin/mpu6050).
//
// New checks WHO_AM_I, wakes the chip with the X gyroscope's PLL as clock,
// and writes the sample rate divider, the digital low-pass filter and both
// full-scale ranges in one auto-incremented write, then the interrupt pin
// configuration. Sense reads the 14 data registers in one burst, so the
// accelerometer, temperature and gyroscope values come from the same sample,
// and scales them to SI units: m/s², °C and rad/s.
//
// The data-ready interrupt (INT_ENABLE.DATA_RDY_EN) raises the INT pin once
// per sample: a 50 µs pulse, or a level held until INT_STATUS is read with
// Opts.LatchInterrupt. A driver that watches that pin's edges reads one
// sample per edge instead of polling INT_STATUS.
//
// Register map: InvenSense RM-MPU-6000A-00 rev 4.2; product specification
// PS-MPU-6000A-00 rev 3.4.
package mpu6050
