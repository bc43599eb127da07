// Package mpu6050 is a register-level twin of the InvenSense MPU-6050
// 6-axis IMU on I²C (address 0x68, or 0x69 with AD0 high).
//
// It answers like the chip: an 8-bit register pointer with auto-increment,
// WHO_AM_I (0x75) reads 0x68, PWR_MGMT_1 (0x6B) resets to 0x40 (asleep) and
// DEVICE_RESET restores the reset values. The sensor registers ACCEL_XOUT_H
// (0x3B) to GYRO_ZOUT_L (0x48) hold the last Sample the physics Set, scaled
// by the full-scale ranges in ACCEL_CONFIG and GYRO_CONFIG, and are frozen
// while the chip sleeps. A burst read sees one consistent sample, as the
// chip's shadow registers guarantee.
//
// Not modelled yet: the FIFO, interrupts, the DMP, sample-rate timing and
// the digital low-pass filter.
//
// Register map: InvenSense RM-MPU-6000A-00 rev 4.2.
package mpu6050
