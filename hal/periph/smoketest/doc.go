// Package smoketest exercises hal/periph on a real Raspberry Pi. Its tests
// are built only with the "hardware" build tag, so go test ./... never
// needs hardware:
//
//	go test -tags hardware ./hal/periph/smoketest/ -v
//
// Wiring (see docs/hardware.md): a jumper from GPIO23 (pin 16) to GPIO24
// (pin 18) for the GPIO test, and from GPIO18 (pin 12) to GPIO24 for the
// hardware PWM test. Other pins can be chosen with SAINT_SMOKE_OUT,
// SAINT_SMOKE_IN and SAINT_SMOKE_PWM (BCM numbers). The I²C test scans bus 1
// and needs nothing wired; SAINT_SMOKE_I2C_ADDR names an address that must
// answer. Tests whose hardware is missing skip with the reason.
package smoketest
