package world_test

import (
	"context"
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/model/pendulum"
	"github.com/saint-os/saint/sim/world"
)

// A world stepping a pendulum at 1 kHz on a virtual clock: after one
// small-angle period it is back where it started.
func Example() {
	ex := executor.NewVirtual()
	w := world.New(ex, world.Options{Seed: 1})
	p := pendulum.New(pendulum.Default())
	p.Set(0.01, 0)
	if err := w.Add(p); err != nil {
		panic(err)
	}
	if err := w.Start(); err != nil {
		panic(err)
	}
	period := time.Duration(p.SmallAnglePeriod() * float64(time.Second)).Round(time.Millisecond)
	_ = ex.RunFor(context.Background(), period)
	fmt.Printf("after %v (%d steps): %.4f rad\n", period, w.Steps(), p.Angle())
	// Output:
	// after 2.006s (2006 steps): 0.0100 rad
}
