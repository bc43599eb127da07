//go:build cgo

package mujoco

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/arm"
	"github.com/saint-os/saint/sim/model/servo"
)

// armGoals is the arm's input profile: goal angles (rad) for the five
// joints and the gripper at time t — hold, a step of every joint at once,
// then sines of different frequencies.
func armGoals(t float64) [arm.NumJoints + 1]float64 {
	switch {
	case t < 0.3:
		return [6]float64{0, math.Pi / 2, -math.Pi / 2, 0, 0, 0}
	case t < 2:
		return [6]float64{0.8, 0.6, -1.2, 0.5, 1.0, 0.6}
	default:
		w := 2 * math.Pi * t
		return [6]float64{0.8 * math.Sin(0.4*w), 0.9 + 0.5*math.Sin(0.6*w), -1.0 + 0.6*math.Sin(0.5*w),
			0.6 * math.Sin(0.9*w), 1.2 * math.Sin(0.7*w), 0.5 * math.Sin(1.3*w)}
	}
}

// armRun drives an arm with params p through armGoals beside MuJoCo and
// returns the traces, joints then gripper. With an object the arm first
// closes its gripper on it (width m, mass kg), so MuJoCo's hand, written
// afterwards, carries it; the object presses on MuJoCo's fingers by the
// Go model's spring law.
func armRun(t *testing.T, p arm.Params, objWidth, objMass float64) []*trace {
	t.Helper()
	traces, _, _ := armRunGoals(t, p, armGoals, 5, objWidth, objMass)
	return traces
}

// armRunGoals is armRun through the input profile goals for duration
// seconds; it also returns the two arms at the end.
func armRunGoals(t *testing.T, p arm.Params, goals func(float64) [arm.NumJoints + 1]float64, duration, objWidth, objMass float64) ([]*trace, *arm.Arm, *Sim) {
	t.Helper()
	a := arm.New(p)
	if objWidth > 0 {
		a.Grasp(objWidth, objMass)
		a.SetGripperOpening(0)
		for k := 0; k < 2000 && !a.Holding(); k++ {
			a.Step(worldStep)
		}
		if !a.Holding() {
			t.Fatal("the gripper did not close on the object")
		}
		a.Step(worldStep)
	}
	mj := load(t, a.MJCF(worldStep/oracleSubsteps))
	if mj.Nq() != arm.NumJoints+1 {
		t.Fatalf("MuJoCo arm has %d joints, want %d", mj.Nq(), arm.NumJoints+1)
	}
	var shadow [arm.NumJoints + 1]*servo.Servo
	var friction, coulomb [arm.NumJoints + 1]float64
	for i := 0; i < arm.NumJoints; i++ {
		shadow[i] = servo.New(p.Joints[i].Servo)
		friction[i], coulomb[i] = p.Joints[i].Friction, p.Joints[i].Coulomb
		shadow[i].SetAngle(a.Joint(i).Angle())
		mj.Qpos()[i], mj.Qvel()[i] = a.Joint(i).Angle(), a.Joint(i).Rate()
	}
	shadow[arm.NumJoints] = servo.New(p.Gripper.Servo)
	friction[arm.NumJoints] = arm.GripperFriction
	mj.Qpos()[arm.NumJoints], mj.Qvel()[arm.NumJoints] = a.Gripper().Angle(), a.Gripper().Rate()
	mj.Forward()
	var traces []*trace
	for i := 0; i <= arm.NumJoints; i++ {
		name := arm.JointName(i)
		if i == arm.NumJoints {
			name = "gripper"
		}
		traces = append(traces, &trace{name: name, unit: "rad", scale: 180 / math.Pi, plotUnit: "angle (°)"})
	}
	servoOf := func(i int) *servo.Servo {
		if i == arm.NumJoints {
			return a.Gripper()
		}
		return a.Joint(i)
	}
	for k := 0; k < int(duration/worldStep); k++ {
		goal := goals(float64(k) * worldStep)
		if objWidth > 0 {
			goal[arm.NumJoints], _ = a.Gripper().Limits() // keep squeezing the object
		}
		for i, g := range goal {
			servoOf(i).SetGoal(g)
			shadow[i].SetGoal(g)
		}
		a.Step(worldStep)
		for s := 0; s < oracleSubsteps; s++ {
			q, v, f := mj.Qpos(), mj.Qvel(), mj.QfrcApplied()
			for i := range shadow {
				f[i] = shadow[i].DriveTorque(q[i], v[i]) - friction[i]*v[i] - coulomb[i]*math.Tanh(v[i]/0.01)
			}
			g := p.Gripper
			if gap := g.MaxGap/2 + 2*g.FingerLever*q[arm.NumJoints]; objWidth > 0 && gap < objWidth {
				f[arm.NumJoints] += 2 * g.Stiffness * (objWidth - gap) * g.FingerLever
			}
			mj.Step()
			armSticks(mj, shadow[:arm.NumJoints], coulomb[:arm.NumJoints])
		}
		for i, tr := range traces {
			tr.add(float64(k+1)*worldStep, servoOf(i).Angle(), mj.Qpos()[i])
		}
	}
	return traces, a, mj
}

// armSticks applies the Go arm's stiction rule (arm.StickRate) to
// MuJoCo's arm: when every joint is slower than the band and each joint's
// drive against its gravity load is within its Coulomb friction, static
// friction stops the arm.
func armSticks(mj *Sim, drives []*servo.Servo, coulomb []float64) {
	q, v := mj.Qpos(), mj.Qvel()
	for i := range drives {
		if !(math.Abs(v[i]) <= arm.StickRate) {
			return
		}
	}
	saved := append([]float64(nil), v[:len(drives)]...)
	clear(v[:len(drives)])
	mj.Forward()
	bias := mj.QfrcBias()
	for i, s := range drives {
		if !(math.Abs(s.DriveTorque(q[i], 0)-bias[i]) <= coulomb[i]) {
			copy(v, saved)
			return
		}
	}
}

// worst is the largest RMS difference among traces.
func worst(traces []*trace) float64 {
	var w float64
	for _, tr := range traces {
		w = math.Max(w, tr.rms())
	}
	return w
}

// TestArm compares the arm's rigid-body dynamics with MuJoCo, and measures
// what the older diagonal approximation (no coupling between joints)
// neglects, with the Feetech servos' rotor inertia and with the low
// reflected inertia of low-ratio torque actuators.
func TestArm(t *testing.T) {
	geared := arm.Default("left")
	direct := arm.Default("left")
	for i := range direct.Joints {
		direct.Joints[i].Servo.RotorInertia = 1e-4
	}
	for _, c := range []struct {
		name   string
		params arm.Params
	}{{"arm", geared}, {"arm_low_ratio", direct}} {
		t.Run(c.name, func(t *testing.T) {
			rigid := armRun(t, c.params, 0, 0)
			for _, tr := range rigid {
				tr.check(t, 1e-3)
			}
			plotTraces(t, c.name, rigid)
			diag := c.params
			diag.DiagonalInertia = true
			approx := armRun(t, diag, 0, 0)
			for _, tr := range approx {
				maxDiff, _ := tr.maxAbs()
				t.Logf("diagonal approximation: %-14s RMS %.3g rad, max %.3g rad", tr.name, tr.rms(), maxDiff)
			}
			plotTraces(t, c.name+"_diagonal", approx)
			// The coupling the approximation neglects must show: else the
			// comparison could not tell the two models apart.
			if worst(approx) <= worst(rigid) {
				t.Errorf("diagonal approximation's worst RMS %.3g rad not above the rigid-body model's %.3g rad", worst(approx), worst(rigid))
			}
		})
	}
}

// TestArmHoldingObject: the arm moves through the same profile holding a
// 0.5 kg object 4 cm wide, whose mass the chain carries at the fingers.
func TestArmHoldingObject(t *testing.T) {
	traces := armRun(t, arm.Default("right"), 0.04, 0.5)
	for _, tr := range traces[:arm.NumJoints] {
		tr.check(t, 1e-3)
	}
	plotTraces(t, "arm_holding", traces[:arm.NumJoints])
}

// TestArmSticks: the arm swings to a pose held out and settles there, so
// both models' static friction (arm.StickRate) ends the motion; they agree
// on the way and the arm comes to rest in both.
func TestArmSticks(t *testing.T) {
	held := func(float64) [arm.NumJoints + 1]float64 {
		return [arm.NumJoints + 1]float64{0.3, 0.1, 0.4, -0.5, 0.2, 0}
	}
	traces, a, mj := armRunGoals(t, arm.Default("left"), held, 3, 0, 0)
	for _, tr := range traces[:arm.NumJoints] {
		tr.check(t, 1e-3)
	}
	for i := 0; i < arm.NumJoints; i++ {
		if w := a.Joint(i).Rate(); w != 0 {
			t.Errorf("Go arm: %s still moves at %.3g rad/s", arm.JointName(i), w)
		}
		if w := mj.Qvel()[i]; w != 0 {
			t.Errorf("MuJoCo arm: %s still moves at %.3g rad/s", arm.JointName(i), w)
		}
	}
}
