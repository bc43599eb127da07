package rctx_test

import (
	"context"
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// An RC transmitter sending CRSF into a simulated UART, read by the decoder
// the server uses, on a virtual clock.
func Example() {
	ex := executor.NewVirtual()
	device, server := uarttest.Pipe(ex.Clock())

	var last rc.Frame
	frames := 0
	dec := rc.NewCRSFDecoder(func(f rc.Frame) { last, frames = f, frames+1 })
	server.Receive(dec.Feed)

	tx, err := rctx.NewSerial(ex, device, rc.CRSF, nil)
	if err != nil {
		panic(err)
	}
	_ = tx.SetNormalized(1, 0.5) // steering half right
	_ = tx.SetNormalized(2, -1)  // throttle back
	_ = tx.SetSwitch(5, true)    // arm switch
	_ = tx.SetLink(-72, 88)      // a weaker link

	_ = ex.RunFor(context.Background(), time.Second)
	fmt.Println(frames, "frames, every", last.Interval)
	fmt.Println("channels µs:", last.Channels()[:5])
	fmt.Println("RSSI", last.Link.RSSIdBm(), "dBm, LQ", last.Link.UplinkLQ, "%")
	// Output:
	// 250 frames, every 4ms
	// channels µs: [1750 1000 1500 1500 2000]
	// RSSI -72 dBm, LQ 88 %
}
