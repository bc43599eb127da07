package simboard_test

import (
	"fmt"
	"log"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/clock"
	simboard "github.com/saint-os/saint/sim/board"
)

// A head node on the simulated Pi: the node reports what it finds, the role
// claims its servo pins and centres the pan servo, and the physics reads the
// pulse it was commanded.
func Example() {
	clk := clock.NewVirtual(time.Time{})
	b, err := simboard.New(&simboard.Options{Profile: simboard.Head, NodeID: "sim-head-1", Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range b.Scan() {
		fmt.Printf("%s %s: %s\n", p.Type, p.Address, p.Description)
	}

	if err := b.Claim(12, board.DirPWM, "pan_servo"); err != nil {
		log.Fatal(err)
	}
	pan, err := b.Hardware().PWM(12)
	if err != nil {
		log.Fatal(err)
	}
	if err := pan.PWM(1.5e-3*50, 50); err != nil { // 1.5 ms at 50 Hz
		log.Fatal(err)
	}
	for _, p := range b.Pins() {
		if p.BCM == 12 {
			fmt.Printf("pin %d %s %s %s used by %s\n", p.Number, p.Name, p.Direction, p.State, p.UsedBy)
		}
	}
	freq, duty, _ := b.PWMState(12)
	fmt.Printf("pan pulse %.1f ms\n", duty/freq*1e3)
	// Output:
	// i2c 1:0x40: PCA9685 PWM controller
	// i2c 1:0x68: MPU6050 IMU
	// camera csi0: Raspberry Pi Camera Module (CSI)
	// pin 32 GPIO12 pwm pwm_7 used by pan_servo
	// pan pulse 1.5 ms
}
