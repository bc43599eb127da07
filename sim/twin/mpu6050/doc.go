// Package mpu6050 is a register-level twin of the InvenSense MPU-6050
// 6-axis IMU on I²C (address 0x68, or 0x69 with AD0 high).
//
// It answers like the chip: an 8-bit register pointer with auto-increment
// that wraps from 0x7F to 0x00, WHO_AM_I (0x75) reads 0x68, PWR_MGMT_1
// (0x6B) resets to 0x40 (asleep) and DEVICE_RESET restores the reset
// values. The configuration registers the chip has (SMPLRT_DIV, CONFIG,
// GYRO_CONFIG, ACCEL_CONFIG, FIFO_EN, the auxiliary I²C master, INT_PIN_CFG,
// INT_ENABLE, USER_CTRL, PWR_MGMT_1/2) hold what is written; reserved and
// read-only registers ignore writes, and reserved ones read 0.
//
// The sensor registers ACCEL_XOUT_H (0x3B) to GYRO_ZOUT_L (0x48) hold a
// sample of what the physics set (Set, or SetMotion from orientation,
// angular rate and linear acceleration), with seeded bias and noise
// (Options.Noise), scaled by the full-scale ranges and saturated as the ADCs
// do; they are frozen while the chip sleeps, and a burst read sees one
// consistent sample.
//
// With a clock (Options.Clock, or WireInterrupt's executor) the chip samples
// at its output data rate, gyroscope rate / (1 + SMPLRT_DIV) with the
// gyroscope rate 8 kHz when DLPF_CFG is 0 or 7 and 1 kHz otherwise; each
// sample sets INT_STATUS.DATA_RDY (cleared by reading INT_STATUS, or by any
// read with INT_RD_CLEAR) and, with INT_ENABLE.DATA_RDY_EN, asserts INT: a
// 50 µs pulse, or held until cleared with LATCH_INT_EN; INT_LEVEL makes it
// active low. Without a clock every read takes a fresh sample.
//
// Not modelled: the FIFO (FIFO_COUNT reads 0), the DMP, self-test, the
// auxiliary I²C master's transfers and the filter's effect on the signal.
//
// Register map: InvenSense RM-MPU-6000A-00 rev 4.2.
//
// Register map: the twin's own reading of the datasheet, kept apart from the
// driver's. The twin defines its registers, reset values and bit meanings
// itself and imports nothing from the driver (hal/device/mpu6050, whose map
// is in its registers.go), so a driver test against the twin checks one
// reading against the other; a mistake both readings share would pass.
package mpu6050
