package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roles/motor"
	simmit "github.com/saint-os/saint/sim/twin/mitmotor"
	simvesc "github.com/saint-os/saint/sim/twin/vesc"
)

// The balance base's two VESCs (roles/balance's default ids, as the
// reference robot wires them).
var balanceVESCs = [2]uint8{68, 56}

// vescState is what each twin reports: a wheel turning forwards on the
// left, backwards on the right, with the supply at 36 V.
func vescState(side int) simvesc.State {
	sign := float64(1 - 2*side)
	return simvesc.State{ERPM: sign * 1500, MotorCurrent: sign * 2.5, Duty: sign * 0.125, InputCurrent: 1.2,
		InputVoltage: 36.4, TempFET: 31.5, TempMotor: 28, Tachometer: int32(sign * 6000), PIDPos: 90}
}

// checkVESC drives the balance base's VESCs through driverBus, as the
// balance role does (hal/device/vesc's SetRPM and SetCurrent), with their
// twins on twinBus: each command must arrive at its controller, and each
// controller's status messages must come back as its telemetry.
func checkVESC(ctx context.Context, driverBus, twinBus can.Bus, ex *executor.Executor) (string, error) {
	var twins [2]*simvesc.Device
	var ctls [2]*vesc.Controller
	for side, id := range balanceVESCs {
		twins[side] = simvesc.New(twinBus, ex, simvesc.Options{ID: id})
		defer twins[side].Close()
		twins[side].SetState(vescState(side))
		ctls[side] = vesc.New(driverBus, id)
		defer ctls[side].Close()
	}
	type step struct {
		send func(c *vesc.Controller) error
		want simvesc.Command
	}
	for side := range ctls {
		sign := float64(1 - 2*side)
		for _, s := range []step{
			{func(c *vesc.Controller) error { return c.SetRPM(sign * 3000) }, simvesc.Command{Mode: simvesc.RPM, Value: sign * 3000}},
			{func(c *vesc.Controller) error { return c.SetCurrent(sign * 4.5) }, simvesc.Command{Mode: simvesc.Current, Value: sign * 4.5}},
			{func(c *vesc.Controller) error { return c.SetCurrent(0) }, simvesc.Command{Mode: simvesc.Off}},
		} {
			if err := s.send(ctls[side]); err != nil {
				return "", err
			}
			twin := twins[side]
			if err := waitFor(ctx, 5*time.Millisecond, func() error {
				got := twin.Command()
				if got.Mode != s.want.Mode || math.Abs(got.Value-s.want.Value) > 1e-9 {
					return fmt.Errorf("VESC %d: commanded %s %v, received %s %v", twin.ID(), s.want.Mode, s.want.Value, got.Mode, got.Value)
				}
				return nil
			}); err != nil {
				return "", err
			}
		}
	}
	for side, c := range ctls {
		want := vescState(side)
		if err := waitFor(ctx, 10*time.Millisecond, func() error {
			t := c.Telemetry()
			if t.Status.At.IsZero() || t.Status4.At.IsZero() || t.Status5.At.IsZero() {
				return fmt.Errorf("VESC %d: status messages not all received (STATUS at %v, STATUS_4 at %v, STATUS_5 at %v)",
					c.ID(), t.Status.At, t.Status4.At, t.Status5.At)
			}
			if t.Status.ERPM != want.ERPM || t.Status.Current != want.MotorCurrent || t.Status.Duty != want.Duty ||
				t.Status4.TempFET != want.TempFET || t.Status4.InputCurrent != want.InputCurrent || t.Status4.PIDPos != want.PIDPos ||
				t.Status5.Tachometer != want.Tachometer || t.Status5.InputVoltage != want.InputVoltage {
				return fmt.Errorf("VESC %d: telemetry %+v, want the twin's state %+v", c.ID(), t, want)
			}
			return nil
		}); err != nil {
			return "", err
		}
	}
	l, r := ctls[0].Telemetry().Status, ctls[1].Telemetry().Status
	return fmt.Sprintf("VESC %d and %d: RPM, current and release commands received; telemetry %.0f/%.0f ERPM, %.1f V",
		balanceVESCs[0], balanceVESCs[1], l.ERPM, r.ERPM, ctls[0].Telemetry().Status5.InputVoltage), nil
}

// The CAN arm's actuators: ids 1–5 shoulder to wrist, with the models
// sim/robot's CAN arm and the arms_can configurations give them.
var armModels = [5]string{"ak80_9", "ak80_9", "ak70_10", "ak60_6", "ak60_6"}

// checkMITArm drives the CAN arm's actuators through driverBus with
// roles/motor's MITActuators, as the arms role does, their twins on
// twinBus: enabling must bring each actuator's reply with its angle, a
// command must reach it (within the wire's resolution) and its torque come
// back, and releasing must take it out of motor mode.
func checkMITArm(ctx context.Context, driverBus, twinBus can.Bus, ex *executor.Executor) (string, error) {
	n := len(armModels)
	twins := make([]*simmit.Device, n)
	acts := &motor.MITActuators{}
	defer acts.Close()
	angle := func(i int) float64 { return 0.3*float64(i) - 0.5 }
	for i, name := range armModels {
		model, err := mitmotor.ModelNamed(name)
		if err != nil {
			return "", err
		}
		id := uint8(i + 1)
		// The loop runs every 2 ms, not the twin's default 1 ms: this
		// check reads torques, not dynamics, and an emulated CPU is slow.
		twins[i], err = simmit.New(twinBus, ex, simmit.Options{ID: id, Model: model, LoopPeriod: 2 * time.Millisecond})
		if err != nil {
			return "", err
		}
		defer twins[i].Close()
		twins[i].SetState(angle(i), 0)
		m, err := mitmotor.New(driverBus, id, model, nil)
		if err != nil {
			return "", err
		}
		acts.Add(m)
	}
	if err := acts.Enable(); err != nil {
		return "", err
	}
	const posTol = 25.0 / 65535 * 2 // two steps of the 16-bit position field over ±12.5 rad
	for i := range twins {
		if err := waitFor(ctx, 5*time.Millisecond, func() error {
			r, fresh := acts.Reply(i)
			if !fresh {
				return fmt.Errorf("actuator %d: no reply to enable", i+1)
			}
			if !twins[i].Enabled() {
				return fmt.Errorf("actuator %d: not in motor mode after enable", i+1)
			}
			if math.Abs(r.Position-angle(i)) > posTol {
				return fmt.Errorf("actuator %d: reply position %.4f rad, want %.4f", i+1, r.Position, angle(i))
			}
			return nil
		}); err != nil {
			return "", err
		}
	}
	// Hold each joint 0.1 rad above where it is, as a position-holding
	// arm does: τ = kp·0.1 + τ_ff.
	out := make([]motor.Output, n)
	for i := range out {
		out[i] = motor.Output{Torque: true, Position: angle(i) + 0.1, Kp: 20, Kd: 0.5, FeedForward: 0.25}
	}
	acts.Write(out)
	var torques []string
	for i := range twins {
		want := 20*0.1 + 0.25
		if err := waitFor(ctx, 5*time.Millisecond, func() error {
			c, _ := twins[i].Command()
			if math.Abs(c.Position-out[i].Position) > posTol || math.Abs(c.Kp-20) > 0.2 || math.Abs(c.Torque-0.25) > 0.05 {
				return fmt.Errorf("actuator %d: received %+v, want position %.3f, kp 20, τ_ff 0.25", i+1, c, out[i].Position)
			}
			if tq := twins[i].Torque(); math.Abs(tq-want) > 0.1 {
				return fmt.Errorf("actuator %d: applies %.3f N·m, want %.3f", i+1, tq, want)
			}
			return nil
		}); err != nil {
			return "", err
		}
	}
	// The torque the twins apply comes back in the replies to the next
	// commands.
	acts.Write(out)
	for i := range twins {
		if err := waitFor(ctx, 5*time.Millisecond, func() error {
			r, fresh := acts.Reply(i)
			if !fresh || math.Abs(r.Torque-twins[i].Torque()) > 0.1 {
				return fmt.Errorf("actuator %d: reply torque %.3f N·m (fresh %v), the twin applies %.3f", i+1, r.Torque, fresh, twins[i].Torque())
			}
			torques = append(torques, fmt.Sprintf("%.2f", r.Torque))
			return nil
		}); err != nil {
			return "", err
		}
	}
	for i := range out {
		out[i] = motor.Output{}
	}
	acts.Write(out)
	for i := range twins {
		if err := waitFor(ctx, 5*time.Millisecond, func() error {
			if twins[i].Enabled() {
				return fmt.Errorf("actuator %d: still in motor mode after release", i+1)
			}
			return nil
		}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d actuators (%v): enabled, replied with their angles, commanded (torques %v N·m came back), released", n, armModels, torques), nil
}
