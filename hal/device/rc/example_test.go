package rc_test

import (
	"encoding/hex"
	"fmt"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/device/rc"
)

// A server reading SBUS: configure the UART with PortConfig, then hand every
// chunk uart.Port.Receive delivers to the decoder.
func Example() {
	cfg, _ := rc.PortConfig(rc.SBUS)
	fmt.Printf("UART %d baud, %d stop bits, inverted %v\n", cfg.Baud, cfg.StopBits, cfg.Inverted)

	d, _ := rc.NewByteDecoder(rc.SBUS, func(f rc.Frame) {
		fmt.Println("channels µs:", f.Channels()[:4], "failsafe:", f.Failsafe)
	})
	frame, _ := hex.DecodeString("0fe0031ff8c0073ef0810f7ce0031ff8c0073ef0810f7c0000")
	d.Feed([]byte{0x42, 0x17}, clock.Epoch()) // line noise
	d.Feed(frame[:10], clock.Epoch())         // a frame in two reads
	d.Feed(frame[10:], clock.Epoch())
	fmt.Printf("%+v\n", d.Stats())
	// Output:
	// UART 100000 baud, 2 stop bits, inverted true
	// channels µs: [1500 1500 1500 1500] failsafe: false
	// {Frames:1 Telemetry:0 BadFrames:0 Discarded:2}
}

// Encoding a CRSF channel frame as a receiver sends it to the flight
// controller.
func ExampleAppendCRSFChannels() {
	var raw [rc.CRSFChannels]uint16
	for i := range raw {
		raw[i] = rc.MicrosToCRSF(1500)
	}
	raw[2] = rc.MicrosToCRSF(1000) // throttle low: 192
	fmt.Printf("% x\n", rc.AppendCRSFChannels(nil, rc.CRSFAddrFlightController, &raw))
	// Output:
	// c8 18 16 e0 03 1f 30 c0 07 3e f0 81 0f 7c e0 03 1f f8 c0 07 3e f0 81 0f 7c 7d
}
