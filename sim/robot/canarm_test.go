package robot_test

import (
	"math"
	"testing"
	"time"

	drv "github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/sim/model/arm"
	"github.com/saint-os/saint/sim/robot"
)

// With CANArms the arm's joints are MIT-mode actuators on the arm board's
// can0: disabled at power-on the arm falls limp; enabled and commanded by
// the driver, each joint settles where the actuator's law balances its
// load, and the replies report the joint's angle.
func TestCANArmEndToEnd(t *testing.T) {
	r, ex := newRobot(t, robot.Options{CANArms: true})
	a := r.Arms[0]
	start := a.Positions()
	can0, err := r.Board(robot.ArmsLeftPart).CANBus("can0")
	if err != nil {
		t.Fatal(err)
	}
	var motors [arm.NumJoints]*drv.Motor
	for i := range motors {
		m, err := drv.ModelNamed(robot.ArmActuatorModel(i))
		if err != nil {
			t.Fatal(err)
		}
		if motors[i], err = drv.New(can0, uint8(i+1), m, nil); err != nil {
			t.Fatal(err)
		}
		defer motors[i].Close()
	}
	runFor(t, ex, 300*time.Millisecond)
	if q := a.Positions(); math.Abs(q[arm.Elbow]-start[arm.Elbow]) < 0.05 {
		t.Fatalf("with the actuators disabled the elbow stayed at %.3f rad (from %.3f)", q[arm.Elbow], start[arm.Elbow])
	}
	target := append([]float64(nil), start...)
	target[arm.Elbow] = -math.Pi / 4
	const kp, kd = 60, 1.5
	for _, m := range motors {
		if err := m.Enable(); err != nil {
			t.Fatal(err)
		}
	}
	ex.Every(10*time.Millisecond, func() {
		for i, m := range motors {
			_ = m.Command(drv.Command{Position: target[i], Kp: kp, Kd: kd})
		}
	})
	runFor(t, ex, 3*time.Second)
	q, dq, tau := a.Positions(), a.Velocities(), a.Efforts()
	for i := range q {
		// At rest the actuator's torque kp·(target − q) − kd·dq holds the
		// load, within the wire's quantisation: two position steps (the
		// target's and the reading's) times kp, a velocity step times kd.
		m, _ := drv.ModelNamed(robot.ArmActuatorModel(i))
		tol := kp*2*(m.Position.Max-m.Position.Min)/65535 + kd*(m.Velocity.Max-m.Velocity.Min)/4095 + (m.Torque.Max-m.Torque.Min)/4095
		if law := kp*(target[i]-q[i]) - kd*dq[i]; math.Abs(law-tau[i]) > tol || math.Abs(dq[i]) > 0.01 {
			t.Errorf("%s: %.4f rad (%.4f rad/s), torque %.3f N·m, the law gives %.3f", arm.JointName(i), q[i], dq[i], tau[i], law)
		}
		if math.Abs(q[i]-target[i]) > 0.05 {
			t.Errorf("%s: %.4f rad, want near %.4f", arm.JointName(i), q[i], target[i])
		}
		rep, _, n := motors[i].Reply()
		if n == 0 || math.Abs(rep.Position-q[i]) > 2e-3 {
			t.Errorf("%s: actuator reports %.4f rad after %d replies, the joint is at %.4f", arm.JointName(i), rep.Position, n, q[i])
		}
	}
}
