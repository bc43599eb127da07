// Package qmi8658 drives a QST QMI8658 6-axis IMU (accelerometer and
// gyroscope) on 4-wire SPI, the balance base's tilt sensor, written against
// hal/spi so that it runs on a Raspberry Pi and, unchanged, on the
// simulator's twin (sim/twin/qmi8658).
//
// On the wire every transfer starts with the register address, bit 7 set
// for a read (0x80); the bytes after it go to, or come from, consecutive
// registers when CTRL1.ADDR_AI is set, which New sets first. New checks
// WHO_AM_I (0x05) and reads REVISION_ID, then writes CTRL1 (auto-increment,
// little-endian, INT2 as an output when the data-ready interrupt is wanted),
// CTRL2–CTRL5 (accelerometer and gyroscope full scale and output data rate,
// filters off) in one burst, CTRL8 (CTRL9 handshake on STATUSINT, since INT1
// is not wired), and finally CTRL7 to enable both sensors, as the
// datasheet's start-up sequence asks: configure first, enable last.
// Command runs a CTRL9 host command with its handshake.
//
// Sense reads TEMP_L to GZ_H (0x33–0x40) in one 14-byte burst and scales the
// values to °C, m/s² and rad/s. DataReady reads STATUS0 (aDA, gDA).
//
// Data ready reaches a pin on INT2: the QMI8658A drives DRDY there when
// CTRL1.INT2_EN is set and CTRL7.DRDY_DIS is clear. Opts.INT is the GPIO
// it is wired to.
//
// Datasheet: QST QMI8658A rev A: sections 5.2 (SPI), 6 (register map),
// 8 (CTRL registers), 9 (output data).
package qmi8658
