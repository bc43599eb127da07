package encoder_test

import (
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/clock"
	drv "github.com/saint-os/saint/hal/device/encoder"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	"github.com/saint-os/saint/sim/twin/encoder"
)

// A wheel turning at 2 rad/s under a 1 kHz physics step, seen by the
// decoder through two pins.
func Example() {
	a, b := gpiotest.NewPin(17, nil), gpiotest.NewPin(27, nil)
	dec, _ := drv.New(a, b, &drv.Options{CountsPerRev: 1024})
	wheel := encoder.New(a, b, encoder.Options{CountsPerRev: 1024})

	t0 := clock.Epoch()
	var now time.Time
	for i := 1; i <= 500; i++ {
		now = t0.Add(time.Duration(i) * time.Millisecond)
		wheel.SetAngle(2*float64(i)/1000, now)
	}
	fmt.Printf("count %d, %.3f rad, %.2f rad/s\n", dec.Count(), dec.Radians(), dec.RadiansPerSecond(now))
	// Output:
	// count 162, 0.994 rad, 2.00 rad/s
}
