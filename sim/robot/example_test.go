package robot_test

import (
	"context"
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/sim/robot"
)

// A simulated robot on a virtual clock: enable both H-bridges of the tracks
// node's board, drive them at 60 % for two seconds, and read where the
// base went from the ground truth.
func Example() {
	ex := executor.NewVirtual()
	r, err := robot.New(robot.Options{Exec: ex, Seed: 1})
	if err != nil {
		panic(err)
	}
	defer r.Stop()
	if err := r.Start(); err != nil {
		panic(err)
	}
	hw := r.Board(robot.TracksPart).Hardware()
	for _, en := range []int{robot.TracksLeftEnable, robot.TracksRightEnable} {
		p, _ := hw.GPIO(en)
		_ = p.Out(gpio.High)
	}
	pca, err := robot.TracksPWM(hw)
	if err != nil {
		panic(err)
	}
	for _, ch := range []int{robot.TracksLeftRPWMCh, robot.TracksRightRPWMCh} {
		_ = pca.SetDuty(ch, 0.6)
	}
	_ = ex.RunFor(context.Background(), 2*time.Second)
	x, y, heading := r.Tracks.Pose()
	fmt.Printf("x %.2f m, y %.2f m, heading %.2f rad, left encoder %d counts\n", x, y, heading, r.Encoder(0).Count())
	// Output:
	// x 1.56 m, y 0.00 m, heading 0.00 rad, left encoder 4444 counts
}
