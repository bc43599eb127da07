package vesc_test

import (
	"context"
	"fmt"
	"time"

	drv "github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/executor"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/twin/vesc"
)

// The balancing base: VESCs 68 (left) and 56 (right) on the balance board's
// can0, commanded through the driver while a motor model answers.
func Example() {
	ex := executor.NewVirtual()
	bd, _ := simboard.New(&simboard.Options{Profile: simboard.Balance, Clock: ex.Clock()})
	can0, _ := bd.CANBus("can0")
	leftMotor := vesc.New(can0, ex, vesc.Options{ID: 68})
	vesc.New(can0, ex, vesc.Options{ID: 56})

	bus, _ := bd.Hardware().CAN("can0")
	left := drv.New(bus, 68)
	_ = left.SetRPM(2400)

	cmd := leftMotor.Command()
	fmt.Println("model told:", cmd.Mode, cmd.Value)
	leftMotor.SetState(vesc.State{ERPM: 2398, MotorCurrent: 3.2, Duty: 0.12, InputVoltage: 36.4})
	_ = ex.RunFor(context.Background(), 50*time.Millisecond)

	tel := left.Telemetry()
	fmt.Printf("telemetry: %.0f ERPM, %.1f A, duty %.2f, %.1f V\n",
		tel.Status.ERPM, tel.Status.Current, tel.Status.Duty, tel.Status5.InputVoltage)

	// No command for a second: the VESC lets go of the motor.
	_ = ex.RunFor(context.Background(), time.Second)
	fmt.Println("after the timeout:", leftMotor.Command().Mode)
	// Output:
	// model told: rpm 2400
	// telemetry: 2398 ERPM, 3.2 A, duty 0.12, 36.4 V
	// after the timeout: off
}
