// Package smoketest checks hal/board/pi on a real Raspberry Pi: identity,
// header pins, the I²C scan and metrics read from the running machine. Its
// test is built only with the "hardware" build tag:
//
//	go test -tags hardware ./hal/board/pi/smoketest/ -v
package smoketest
