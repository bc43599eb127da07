package robot

import (
	"fmt"
	"math"

	drv "github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/sim/model/arm"
	"github.com/saint-os/saint/sim/twin/mitmotor"
)

// ArmActuatorModel returns the MIT-mode actuator model of an arm's joint
// (0–4, shoulder to wrist) with Options.CANArms (hal/device/mitmotor's
// ranges; the arms_can role configurations name the same).
func ArmActuatorModel(joint int) string {
	return [arm.NumJoints]string{"ak80_9", "ak80_9", "ak70_10", "ak60_6", "ak60_6"}[joint]
}

// armActuatorInertia is a joint actuator's rotor inertia seen at the
// output, kg·m² (rotor × gear ratio²).
func armActuatorInertia(joint int) float64 {
	return [arm.NumJoints]float64{6e-3, 6e-3, 5e-3, 3e-3, 3e-3}[joint]
}

// CANArmParams returns the arm of side with its joints on MIT-mode
// actuators: the geometry of arm.Default, each joint's drive the
// actuator's torque range (the twin applies it; the model clamps to it).
func CANArmParams(side string) (arm.Params, error) {
	p := arm.Default(side)
	for i := range p.Joints {
		m, err := drv.ModelNamed(ArmActuatorModel(i))
		if err != nil {
			return p, err
		}
		s := p.Joints[i].Servo
		s.StallTorque = m.Torque.Max
		s.NoLoadSpeed = m.Velocity.Max
		s.RotorInertia = armActuatorInertia(i)
		p.Joints[i].Servo = s
	}
	return p, nil
}

// wireCANArm puts the joint actuators of an arm on its board's can0.
func (r *Robot) wireCANArm(side int, p Part) error {
	bus, err := r.boards[p].CANBus("can0")
	if err != nil {
		return err
	}
	for i := range arm.NumJoints {
		m, err := drv.ModelNamed(ArmActuatorModel(i))
		if err != nil {
			return err
		}
		d, err := mitmotor.New(bus, r.ex, mitmotor.Options{ID: uint8(i + 1), Model: m})
		if err != nil {
			return fmt.Errorf("robot: %s actuator %d: %w", p, i+1, err)
		}
		// The encoder reads the joint from power-on.
		s := r.Arms[side].Joint(i)
		d.SetState(s.Angle(), s.Rate())
		r.actuators[side][i] = d
	}
	return nil
}

// Actuator returns an arm's joint actuator twin (side 0 left, 1 right;
// joint 0–4), or nil when the arms are on Feetech servos.
func (r *Robot) Actuator(side, joint int) *mitmotor.Device {
	if side < 0 || side > 1 || joint < 0 || joint >= arm.NumJoints {
		return nil
	}
	return r.actuators[side][joint]
}

// readCANArm drives the joints with the torques the actuators computed.
func (r *Robot) readCANArm(side int) {
	a := r.Arms[side]
	for i, d := range r.actuators[side] {
		s := a.Joint(i)
		s.SetTorqueEnabled(true)
		s.SetDirectTorque(true, d.Torque())
	}
}

// writeCANArm reports the joints to their actuators and returns the
// supply current they draw (each up to its stall current in proportion to
// its torque, as writeArm counts the servos).
func (r *Robot) writeCANArm(side int) float64 {
	a := r.Arms[side]
	var amps float64
	for i, d := range r.actuators[side] {
		s := a.Joint(i)
		d.SetState(s.Angle(), s.Rate())
		amps += 2.7 * math.Min(1, math.Abs(s.Torque())/s.Params().StallTorque)
	}
	return amps
}

// canArm reports whether the arms are on CAN actuators.
func (r *Robot) canArm() bool { return r.actuators[0][0] != nil }
