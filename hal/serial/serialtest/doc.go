// Package serialtest gives tests a real serial line without hardware: a
// Linux pseudo-terminal whose slave a serial.Port (or any program taking a
// device path) opens like a UART, and whose master the test reads and
// writes as the far end of the wire.
package serialtest
