package feetech_test

import (
	"context"
	"fmt"
	"time"

	ft "github.com/saint-os/saint/hal/device/feetech"
	"github.com/saint-os/saint/hal/executor"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/twin/feetech"
)

// The arms board's servo bus: the driver opens the Pi's UART, the twin sits
// on the device end of the same line, and the servo model in between reads
// goals and reports positions.
func Example() {
	ex := executor.NewVirtual()
	bd, _ := simboard.New(&simboard.Options{Profile: simboard.Arms, Clock: ex.Clock()})
	peer, _ := bd.UARTPeer(simboard.UART)
	servos := feetech.New(peer, nil)
	shoulder, _ := servos.Add(1)

	port, _ := bd.Hardware().UART(simboard.UART)
	bus, _ := ft.New(port, ex, nil)
	bus.SetGoal(ft.Goal{ID: 1, Position: ft.STS.Steps(0.5), Speed: 1500}, func(err error) {
		fmt.Println("goal sent:", err)
	})
	_ = ex.RunFor(context.Background(), 10*time.Millisecond)

	// The model moves the servo to its goal.
	g := shoulder.Goal()
	fmt.Printf("model sees goal %d steps (%.2f rad) at %d steps/s\n", g.Position, ft.STS.Radians(g.Position), g.Speed)
	shoulder.SetPresent(ft.Present{Position: g.Position, Load: 120, Voltage: 7.4, Temperature: 30})

	bus.ReadPresent(1, func(p ft.Present, err error) {
		fmt.Printf("present %d steps, load %.1f %%, %.1f V, err %v\n", p.Position, float64(p.Load)/10, p.Voltage, err)
	})
	_ = ex.RunFor(context.Background(), 10*time.Millisecond)
	// Output:
	// goal sent: <nil>
	// model sees goal 2374 steps (0.50 rad) at 1500 steps/s
	// present 2374 steps, load 12.0 %, 7.4 V, err <nil>
}
