// Package serial is hal/uart on a serial device through go.bug.st/serial:
// the Pi's UARTs (/dev/serial0, /dev/ttyAMA0) and USB adapters
// (/dev/ttyUSB0, /dev/ttyACM0). On Linux it sets any baud rate, including
// the non-standard 100000 of SBUS and 420000 of CRSF, with even or odd
// parity and one or two stop bits.
//
// # Inverted lines
//
// SBUS is inverted (idle low). Inverting is not a Linux serial option on a
// Raspberry Pi: neither the PL011 nor the mini UART can invert RX in
// software. Configure refuses Inverted unless Options.HardwareInverter says
// an inverter is fitted on the line (a 74HC14 gate, or an NPN transistor and
// two resistors, between the receiver and the Pi's RX), in which case the
// inverter does it and the UART runs normal polarity.
//
// # Receiving
//
// Port owns one reader goroutine for the life of the port. It stamps each
// read with the injected clock when the read returns and hands the bytes to
// every callback registered with Receive, on that goroutine. A read returns
// what the driver has buffered, so one burst from a receiver can arrive in
// several pieces with nearly equal stamps; decoders find frames from the
// gaps between bursts (SBUS sends every 7 or 14 ms, a frame takes 3 ms).
//
// Tests run on a pseudo-terminal, which carries bytes both ways but ignores
// the line settings a UART would apply (a pty keeps no baud rate and drops
// parity). Package smoketest, built with the "hardware" tag, checks a real
// UART with its TX jumpered to its RX.
package serial
