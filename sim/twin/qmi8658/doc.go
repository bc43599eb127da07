// Package qmi8658 is a register-level twin of the QST QMI8658 6-axis IMU on
// SPI, the balance base's tilt sensor.
//
// It answers like the chip on a 4-wire SPI bus: the first byte of a transfer
// is the register address with bit 7 set for a read; the bytes after it are
// written to, or read from, that address on, advancing only when CTRL1's
// ADDR_AI bit (bit 6) is set. WHO_AM_I (0x00) reads 0x05 and REVISION_ID
// (0x01) 0x7C; CTRL1 resets to 0x20. The control registers CTRL1–CTRL9 hold
// what is written to them.
//
// This is the identification stage of the twin. The sensor data registers
// (TEMP_L 0x33 to GZ_H 0x40), their scaling by CTRL2/CTRL3 and the data-ready
// status come with the balance physics; until then they read 0.
//
// Datasheet: QST QMI8658A rev A, sections 5.2 (SPI) and 6 (register map).
package qmi8658
