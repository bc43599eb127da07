package i2ctest_test

import (
	"fmt"
	"log"

	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/i2c/i2ctest"
)

// wake is the start of an MPU6050 driver: check WHO_AM_I, take the chip out
// of sleep, and read one accelerometer axis.
func wake(bus i2c.Bus) (int16, error) {
	const addr = 0x68
	id := make([]byte, 1)
	if err := bus.Tx(addr, []byte{0x75}, id); err != nil {
		return 0, err
	}
	if id[0] != 0x68 {
		return 0, fmt.Errorf("mpu6050: WHO_AM_I is %#02x, want 0x68", id[0])
	}
	if err := bus.Tx(addr, []byte{0x6B, 0x00}, nil); err != nil {
		return 0, err
	}
	x := make([]byte, 2)
	if err := bus.Tx(addr, []byte{0x3B}, x); err != nil {
		return 0, err
	}
	return int16(uint16(x[0])<<8 | uint16(x[1])), nil
}

// A driver test reads like the datasheet: each transaction, the register
// it addresses, and what the chip answers.
func ExamplePlayback() {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x68, W: []byte{0x75}, R: []byte{0x68}},       // WHO_AM_I
		{Addr: 0x68, W: []byte{0x6B, 0x00}},                  // PWR_MGMT_1 = 0: wake up
		{Addr: 0x68, W: []byte{0x3B}, R: []byte{0x40, 0x00}}, // ACCEL_XOUT: +1 g at ±2 g
	}}
	x, err := wake(bus)
	if err != nil {
		log.Fatal(err)
	}
	// Close fails if the driver did not have the whole conversation.
	if err := bus.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accel x = %d LSB = %.2f g\n", x, float64(x)/16384)
	// Output:
	// accel x = 16384 LSB = 1.00 g
}

// When the driver says something the script does not expect, it gets an
// error naming both.
func ExamplePlayback_mismatch() {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x68, W: []byte{0x75}, R: []byte{0x68}},
	}}
	err := bus.Tx(0x69, []byte{0x75}, make([]byte, 1))
	fmt.Println(err)
	// Output:
	// i2ctest: transaction #0: want Tx(0x68, w [0x75], r 1 byte(s)), got Tx(0x69, w [0x75], r 1 byte(s))
}
