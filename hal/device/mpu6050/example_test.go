package mpu6050_test

import (
	"fmt"
	"log"

	"github.com/saint-os/saint/hal/device/mpu6050"
	"github.com/saint-os/saint/sim/twin"
	twinmpu "github.com/saint-os/saint/sim/twin/mpu6050"
)

// The driver runs unchanged on the simulator's twin: the physics says the
// head is still and level, the driver reads +1 g on z.
func Example() {
	bus := &twin.I2CBus{Name: "i2c-1"}
	bus.Attach(0x68, twinmpu.New())
	imu, err := mpu6050.New(bus, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := imu.Sense()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s at %.0f Hz: accel z %.2f m/s², %.1f °C\n", imu, imu.SampleRate(), s.Accel[2], s.TempC)
	// Output:
	// MPU6050{0x68} at 100 Hz: accel z 9.81 m/s², 25.0 °C
}
