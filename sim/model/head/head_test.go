package head

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/saint-os/saint/sim/model/geom"
)

const dt = 1e-3

func pulse(deg, halfTravelDeg float64) float64 { return 1500 + deg/halfTravelDeg*1000 }

// Commanded by 50 Hz PWM, the head reaches its angles, and the IMU sees
// gravity where the orientation puts it.
func TestPoseAndIMU(t *testing.T) {
	h := New(Default(), nil)
	want := [3]float64{60, 30, -20} // degrees
	half := [3]float64{180, 90, 45}
	for i := range want {
		h.SetPWM(i, 50, pulse(want[i], half[i])/20000, true)
	}
	for i := 0; i < 2000; i++ {
		h.Step(dt)
	}
	a := h.Angles()
	for i := range want {
		// Tolerance: the deadband plus the sag gravity costs tilt and roll.
		if got := a[i] * 180 / math.Pi; math.Abs(got-want[i]) > 1 {
			t.Errorf("axis %d at %.2f°, want %.0f° ± 1°", i, got, want[i])
		}
	}
	acc, gyr := h.TrueIMU()
	g := h.Orientation().ApplyT(geom.Vec3{0, 0, StandardGravity})
	if acc.Sub(g).Norm() > 1e-6 || gyr.Norm() > 1e-3 {
		t.Errorf("at rest: accel %v gyro %v, want %v and 0", acc, gyr, g)
	}
	// Looking 30° down, +x of the head points 30° below the horizon: the
	// specific force (+g up) has a component −g·sin(30°) along head x when
	// roll is zero.
	h2 := New(Default(), nil)
	h2.Servo(Tilt).SetAngle(math.Pi / 6)
	if acc, _ := h2.TrueIMU(); math.Abs(acc[0]+StandardGravity*0.5) > 1e-9 || math.Abs(acc[2]-StandardGravity*math.Sqrt(3)/2) > 1e-9 {
		t.Errorf("tilted 30° down: accel %v", acc)
	}
}

// A pan turn shows up on the gyro's z axis at the pan rate; a tilt on y.
func TestGyroFollowsMotion(t *testing.T) {
	h := New(Default(), nil)
	h.SetPWM(Pan, 50, 2000.0/20000, true)
	h.SetPWM(Tilt, 50, 1500.0/20000, true)
	h.SetPWM(Roll, 50, 1500.0/20000, true)
	peak := 0.0
	for i := 0; i < 300; i++ {
		h.Step(dt)
		_, g := h.TrueIMU()
		if math.Abs(g[2]-h.Rates()[Pan]) > 1e-9 {
			t.Fatalf("gyro z %.4f, pan rate %.4f", g[2], h.Rates()[Pan])
		}
		peak = math.Max(peak, g[2])
	}
	if peak < 3 {
		t.Errorf("peak pan rate %.2f rad/s, want a servo-speed turn", peak)
	}
}

// Panning at the servo's full speed swings the IMU, 5 cm forward of the
// pan axis, round a circle: the accelerometer feels ω²·r towards the axis
// (−x in the head frame), on top of gravity.
func TestCentripetal(t *testing.T) {
	h := New(Default(), nil)
	h.SetPWM(Pan, 50, 2500.0/20000, true)
	h.SetPWM(Tilt, 50, 1500.0/20000, true)
	h.SetPWM(Roll, 50, 1500.0/20000, true)
	for i := 0; i < 250; i++ { // past the spin-up, before the goal
		h.Step(dt)
	}
	w := h.Rates()[Pan]
	acc, _ := h.TrueIMU()
	want := -w * w * h.p.IMUOffset[0]
	if w < 5 || math.Abs(acc[0]-want) > 0.02*math.Abs(want) || math.Abs(acc[2]-StandardGravity) > 0.01 {
		t.Errorf("panning at %.2f rad/s: accel %v, want x = −ω²r = %.3f and z = g", w, acc, want)
	}
}

// Noise is seeded: same stream, same readings; and it averages out to the
// bias.
func TestIMUNoiseSeeded(t *testing.T) {
	read := func(seed uint64) (geom.Vec3, geom.Vec3) {
		h := New(Default(), rand.New(rand.NewPCG(seed, 1)))
		var sa, sg geom.Vec3
		for i := 0; i < 10000; i++ {
			a, g := h.IMU()
			sa, sg = sa.Add(a), sg.Add(g)
		}
		return sa.Scale(1e-4), sg.Sub(h.bias.Scale(1e4)).Scale(1e-4)
	}
	a1, g1 := read(3)
	a2, g2 := read(3)
	if a1 != a2 || g1 != g2 {
		t.Error("the same seed gave different readings")
	}
	if math.Abs(a1[2]-StandardGravity) > 0.01 || g1.Norm() > 1e-3 {
		t.Errorf("mean accel %v, mean gyro−bias %v: noise does not average out", a1, g1)
	}
}

// Without power (dead, or no PWM) gravity tips the head onto its stops.
func TestDeadHeadFalls(t *testing.T) {
	h := New(Default(), nil)
	h.Servo(Tilt).SetAngle(0.1)
	h.SetDead(true)
	for i := 0; i < 2000; i++ {
		h.Step(dt)
	}
	if _, hi := h.Servo(Tilt).Limits(); h.Angles()[Tilt] != hi {
		t.Errorf("dead head tilt %.3f, want on its stop %.3f", h.Angles()[Tilt], hi)
	}
}

func BenchmarkStep(b *testing.B) {
	h := New(Default(), rand.New(rand.NewPCG(1, 2)))
	for i := range 3 {
		h.SetPWM(i, 50, 0.08, true)
	}
	for i := 0; i < b.N; i++ {
		h.Step(dt)
		h.IMU()
	}
}

// Reusing the last pose's trigonometry changes nothing: a head that
// recomputes everything every step follows the same trajectory, bit for
// bit, through moves and holds.
func TestCachedKinematicsChangeNothing(t *testing.T) {
	cached, fresh := New(Default(), nil), New(Default(), nil)
	for step := range 3000 {
		if step%1000 == 0 {
			for _, h := range []*Head{cached, fresh} {
				h.SetPWM(Pan, 50, pulse(float64(step/20), 90)/20000, true)
				h.SetPWM(Tilt, 50, pulse(-10, 45)/20000, true)
			}
		}
		fresh.kin.valid, fresh.imu.valid = false, false
		cached.Step(dt)
		fresh.Step(dt)
		fresh.imu.valid = false
		ac, gc := cached.TrueIMU()
		af, gf := fresh.TrueIMU()
		if ac != af || gc != gf || !same(cached.AppendState(nil), fresh.AppendState(nil)) {
			t.Fatalf("step %d: cached %v %v %v, fresh %v %v %v", step, cached.AppendState(nil), ac, gc, fresh.AppendState(nil), af, gf)
		}
	}
}
