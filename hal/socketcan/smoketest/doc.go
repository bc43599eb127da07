// Package smoketest checks hal/socketcan on a real CAN interface. Its test
// is built only with the "hardware" build tag:
//
//	sudo ip link set can0 up type can bitrate 500000 loopback on
//	go test -tags hardware ./hal/socketcan/smoketest/ -v
//
// With loopback on, the controller acknowledges its own frames, so nothing
// else needs to be on the bus; without it, another node (a VESC) must be
// there to acknowledge. SAINT_SMOKE_CAN names another interface than can0.
package smoketest
