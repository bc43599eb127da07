// Package link is the saul-tee inter-board protocol between the IO board and
// the balance board: a UART at 460800 baud carrying frames
//
//	[0xAA][LEN][TYPE][PAYLOAD × LEN][CRC8]
//
// where LEN counts the payload bytes only and CRC8 is CRC-8/MAXIM (poly 0x31
// reflected, init 0) over TYPE and PAYLOAD. Multi-byte fields are
// little-endian, the byte order of both ESP32-S3 boards.
//
// IO → BALANCE: RC_CMD (0x01), SENSOR (0x02), FAULT (0x03).
// BALANCE → IO: STATE (0x10), LED_CMD (0x11), BUZZER (0x12).
//
// Append encodes a message into a frame; Decoder is a streaming decoder fed
// whatever chunks the UART delivers. It finds frames by the start byte, a
// plausible length and the checksum, resynchronises after garbage (a bad
// frame costs only its start byte: the bytes after it are searched again),
// never panics, and counts what it rejected. Both ends use the same code:
// the balance role and the IO board's firmware (hal/device/ioboard).
package link
