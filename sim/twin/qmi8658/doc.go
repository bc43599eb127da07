// Package qmi8658 is a register-level twin of the QST QMI8658A 6-axis IMU
// on SPI, the balance base's tilt sensor.
//
// It answers like the chip on a 4-wire SPI bus: the first byte of a transfer
// is the register address with bit 7 set for a read; the bytes after it are
// written to, or read from, that address on, advancing only when CTRL1's
// ADDR_AI bit (bit 6) is set. WHO_AM_I (0x00) reads 0x05 and REVISION_ID
// (0x01) 0x7C; CTRL1 resets to 0x20 (big-endian). CTRL1–CTRL9, the CAL
// registers and the FIFO control registers hold what is written to them;
// identification, status and data registers ignore writes; reserved
// registers read 0. Writing 0xB0 to RESET (0x60) is a soft reset. A CTRL9
// command is done at once (STATUSINT.CmdDone, STATUS1 bit 0) until the host
// acknowledges it with CTRL_CMD_ACK (0).
//
// Data: TEMP (0x33, °C × 256), accelerometer AX–AZ (0x35) and gyroscope
// GX–GZ (0x3B) hold a sample of what the physics set (Set or SetMotion),
// with seeded bias and noise, scaled by CTRL2.aFS (16384 LSB/g at ±2 g) and
// CTRL3.gFS (2048 LSB/(°/s) at ±16 °/s), saturated; each pair reads low byte
// first unless CTRL1.BE is set. Only the sensors enabled in CTRL7 update.
// TIMESTAMP (0x30–0x32) counts samples.
//
// With a clock the chip samples at its output data rate: the gyroscope's
// (CTRL3.gODR: 8000 >> code Hz × 0.8968) when it is enabled, otherwise the
// accelerometer's (8000 >> code, or 128/21/11/3 Hz in low power). Each
// sample sets STATUS0.aDA/gDA (cleared by reading that sensor's data) and,
// with CTRL1.INT2_EN and CTRL7.DRDY_DIS clear, raises INT2 until the data is
// read or half a period passes. Without a clock every read samples afresh.
//
// Not modelled: the FIFO, the attitude engine, motion detection, self-test,
// the low-pass filters' effect, INT1, and I²C/I3C.
//
// Datasheet: QST QMI8658A rev A, sections 5.2 (SPI), 6 (register map), 8.
//
// Register map: the twin's own reading of the datasheet, kept apart from the
// driver's. The twin defines its registers, reset values and bit meanings
// itself and imports nothing from the driver (hal/device/qmi8658, whose map
// is in its registers.go), so a driver test against the twin checks one
// reading against the other; a mistake both readings share would pass.
package qmi8658
