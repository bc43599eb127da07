// Package smoketest checks hal/serial on a real UART. Its test is built
// only with the "hardware" build tag; jumper TX (GPIO14, pin 8) to RX
// (GPIO15, pin 10), enable the UART (enable_uart=1, no serial console) and:
//
//	go test -tags hardware ./hal/serial/smoketest/ -v
//
// SAINT_SMOKE_UART names another device than /dev/serial0.
package smoketest
