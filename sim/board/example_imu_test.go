package simboard_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/saint-os/saint/hal/device/qmi8658"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/twin"
)

// A balance loop driven by the IMU's data-ready pin: the physics tilts the
// base, the twin samples at its output data rate on the executor's clock
// and raises INT2 on GPIO25, and the loop reads one sample per edge.
func Example_dataReady() {
	ex := executor.NewVirtual()
	b, err := simboard.New(&simboard.Options{Profile: simboard.Balance, Exec: ex})
	if err != nil {
		log.Fatal(err)
	}
	// Physics: the base leans 5° forward (a rotation about y; x points
	// forward, so the nose goes down).
	th := 5 * math.Pi / 180
	b.QMI8658().SetMotion(twin.Motion{Orientation: [4]float64{math.Cos(th / 2), 0, math.Sin(th / 2), 0}})

	hw := b.Hardware()
	conn, _ := hw.SPI(0, 0)
	pin, _ := hw.GPIO(simboard.QMI8658INT2)
	var reads int
	var lean float64
	ex.Post(func() {
		o := qmi8658.DefaultOpts()
		o.INT = pin
		imu, err := qmi8658.New(conn, &o)
		if err != nil {
			log.Fatal(err)
		}
		pin.(gpio.EdgeWatcher).WatchEdges(func(e gpio.EdgeEvent) {
			if !e.Level {
				return
			}
			// Edges may come on any goroutine: hand them to the loop.
			ex.Post(func() {
				s, err := imu.Sense()
				if err != nil {
					log.Fatal(err)
				}
				reads++
				lean = math.Atan2(-s.Accel[0], s.Accel[2]) * 180 / math.Pi
			})
		})
	})
	if err := ex.RunFor(context.Background(), 100*time.Millisecond); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d samples in 100 ms, leaning %.1f°\n", reads, lean)
	// Output:
	// 89 samples in 100 ms, leaning 5.0°
}
