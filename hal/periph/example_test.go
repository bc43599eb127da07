package periph_test

import (
	"fmt"

	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/periph"
)

// A chip driver takes a hal/i2c.Bus; on a Pi it gets a periph bus through
// the adapter (Host.I2C opens /dev/i2c-1), here a periph playback of an
// MPU6050 answering WHO_AM_I.
func ExampleI2C() {
	pb := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: 0x68, W: []byte{0x75}, R: []byte{0x68}}}}
	var bus i2c.Bus = periph.NewI2C(pb, "1")
	who := make([]byte, 1)
	if err := bus.Tx(0x68, []byte{0x75}, who); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("WHO_AM_I = %#02x\n", who[0])
	// A 10-bit address never reaches the bus.
	fmt.Println(bus.Tx(0x123, nil, who))
	// Output:
	// WHO_AM_I = 0x68
	// periph: I²C bus 1: address 0x123, want a 7-bit address (0x00–0x7f)
}
