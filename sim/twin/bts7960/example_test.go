package bts7960_test

import (
	"fmt"

	drv "github.com/saint-os/saint/hal/device/bts7960"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/twin/bts7960"
)

// The tracks board's left bridge: the driver on GPIO12/13 with both
// enables on GPIO5, the twin reading the same pins for the motor model.
func Example() {
	bd, _ := simboard.New(&simboard.Options{Profile: simboard.Tracks})
	hw := bd.Hardware()
	r, _ := hw.PWM(12)
	l, _ := hw.PWM(13)
	en, _ := hw.GPIO(5)
	bridge, _ := drv.New(drv.Pins{RPWM: r, LPWM: l, REN: en}, nil)
	twin := bts7960.New(bd, bts7960.Wiring{RPWM: 12, LPWM: 13, REN: 5, LEN: 5})

	const supply = 12.0 // V
	_ = bridge.SetDuty(-0.4)
	out := twin.Output()
	fmt.Printf("%v %.1f V at %.0f Hz\n", out.Mode, out.Duty*supply, out.FreqHz)
	_ = bridge.Brake()
	fmt.Println(twin.Output().Mode)
	_ = bridge.Coast()
	fmt.Println(twin.Output().Mode)
	// Output:
	// drive -4.8 V at 20000 Hz
	// brake
	// coast
}
