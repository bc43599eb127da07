package robot_test

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/clock"
	encdrv "github.com/saint-os/saint/hal/device/encoder"
	ftdrv "github.com/saint-os/saint/hal/device/feetech"
	inadrv "github.com/saint-os/saint/hal/device/ina219"
	mpudrv "github.com/saint-os/saint/hal/device/mpu6050"
	pcadrv "github.com/saint-os/saint/hal/device/pca9685"
	qmidrv "github.com/saint-os/saint/hal/device/qmi8658"
	vescdrv "github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/model/arm"
	"github.com/saint-os/saint/sim/model/head"
	"github.com/saint-os/saint/sim/model/tracks"
	"github.com/saint-os/saint/sim/robot"
	"github.com/saint-os/saint/sim/twin"
)

const g0 = 9.80665

func newRobot(t testing.TB, o robot.Options) (*robot.Robot, *executor.Executor) {
	t.Helper()
	if o.Exec == nil {
		o.Exec = executor.NewVirtual()
	}
	r, err := robot.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r, o.Exec
}

func runFor(t testing.TB, ex *executor.Executor, d time.Duration) {
	t.Helper()
	if err := ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// Driving the tracks' H-bridge pins moves the base, and the encoder pins
// give a decoder the counts the ground-truth track travel implies.
func TestTracksEndToEnd(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 1})
	hw := r.Board(robot.TracksPart).Hardware()
	for _, en := range []int{robot.TracksLeftEnable, robot.TracksRightEnable} {
		p, err := hw.GPIO(en)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Out(gpio.High); err != nil {
			t.Fatal(err)
		}
	}
	pca, err := robot.TracksPWM(hw)
	if err != nil {
		t.Fatal(err)
	}
	if err := pca.SetDuty(robot.TracksLeftRPWMCh, 0.4); err != nil {
		t.Fatal(err)
	}
	if err := pca.SetDuty(robot.TracksRightRPWMCh, 0.6); err != nil {
		t.Fatal(err)
	}
	cpr := int(r.Tracks.Params().EncoderCPR)
	decoder := func(a, b int) *encdrv.Decoder {
		pa, _ := hw.GPIO(a)
		pb, _ := hw.GPIO(b)
		d, err := encdrv.New(pa.(encdrv.Pin), pb.(encdrv.Pin), &encdrv.Options{CountsPerRev: cpr})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		return d
	}
	left, right := decoder(robot.TracksLeftEncA, robot.TracksLeftEncB), decoder(robot.TracksRightEncA, robot.TracksRightEncB)
	runFor(t, ex, 2*time.Second)

	sprocket := 2 * math.Pi * r.Tracks.Params().SprocketRadius
	for side, d := range []*encdrv.Decoder{left, right} {
		travel := r.Tracks.TrackTravel(side)
		want := travel / sprocket * float64(cpr)
		if math.Abs(float64(d.Count())-want) > 1 || d.Illegal() != 0 {
			t.Errorf("side %d: decoder counted %d (%d illegal), %.3f m of track is %.1f counts", side, d.Count(), d.Illegal(), travel, want)
		}
	}
	if left.Count() < 1000 || right.Count() <= left.Count() {
		t.Errorf("counts left %d right %d: want the right track (60 %%) well ahead of the left (40 %%)", left.Count(), right.Count())
	}
	x, y, h := r.Tracks.Pose()
	if x <= 0 || y <= 0 || h <= 0 {
		t.Errorf("pose (%.3f, %.3f, %.3f): want forward and curving left", x, y, h)
	}
	// The INA219 on the battery line sees the motors' draw.
	ina := r.Board(robot.TracksPart).INA219()
	if v := r.Tracks.BatteryVoltage(); v >= r.Tracks.Battery().OpenCircuit() || ina == nil {
		t.Errorf("battery %.3f V under load, open circuit %.3f", v, r.Tracks.Battery().OpenCircuit())
	}
}

// PWM on the head's servo pins moves the head model, and the MPU6050 read
// by its driver over I²C sees gravity where the head's tilt puts it.
func TestHeadEndToEnd(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 2})
	hw := r.Board(robot.HeadPart).Hardware()
	servo := func(pin int, us float64) {
		p, err := hw.PWM(pin)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PWM(us/20000, 50); err != nil {
			t.Fatal(err)
		}
	}
	// pan ±180° over 500–2500 µs, tilt ±90°, roll ±45°.
	servo(robot.HeadPanPin, 1500+1000*45.0/180)
	servo(robot.HeadTiltPin, 1500+1000*30.0/90)
	i2c, err := hw.I2C(1)
	if err != nil {
		t.Fatal(err)
	}
	pca, err := pcadrv.New(i2c, &pcadrv.Opts{Addr: simboard.HeadPCA9685})
	if err != nil {
		t.Fatal(err)
	}
	if err := pca.SetPulse(robot.HeadRollChannel, 1500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	imu, err := mpudrv.New(i2c, nil)
	if err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, 2*time.Second)
	a := r.Head.Angles()
	if deg := a[head.Pan] * 180 / math.Pi; math.Abs(deg-45) > 1 {
		t.Errorf("pan %.2f°, want 45°", deg)
	}
	if deg := a[head.Tilt] * 180 / math.Pi; math.Abs(deg-30) > 1 {
		t.Errorf("tilt %.2f°, want 30°", deg)
	}
	// Average a few readings against the chip's noise.
	var sum [3]float64
	for i := 0; i < 20; i++ {
		s, err := imu.Sense()
		if err != nil {
			t.Fatal(err)
		}
		for k := range sum {
			sum[k] += s.Accel[k] / 20
		}
		runFor(t, ex, 5*time.Millisecond)
	}
	st, ct := math.Sincos(a[head.Tilt])
	// 1 m/s²: the twin's accelerometer has the MPU6050's zero-g offset
	// (up to ±80 mg); level would read (0, 0, 9.8), 5 m/s² away.
	if math.Abs(sum[0]+g0*st) > 1 || math.Abs(sum[2]-g0*ct) > 1 {
		t.Errorf("MPU6050 accel %.3f, want (%.3f, 0, %.3f) for a %.1f° tilt", sum, -g0*st, g0*ct, a[head.Tilt]*180/math.Pi)
	}
}

// The balance base: current commands through the VESC driver on can0 turn
// the wheels, the VESCs' status reports the motion, and the QMI8658 driver
// sees the body tip.
func TestBalanceEndToEnd(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 3})
	hw := r.Board(robot.BalancePart).Hardware()
	can0, err := hw.CAN("can0")
	if err != nil {
		t.Fatal(err)
	}
	left, right := vescdrv.New(can0, robot.VESCLeftID), vescdrv.New(can0, robot.VESCRightID)
	defer left.Close()
	defer right.Close()
	tick := ex.Every(20*time.Millisecond, func() {
		_ = left.SetCurrent(3)
		_ = right.SetCurrent(3)
	})
	defer tick.Stop()
	spi, err := hw.SPI(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	imu, err := qmidrv.New(spi, nil)
	if err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, 100*time.Millisecond)
	kt := r.Balance.Params().Motor.Kt
	if tq := r.Balance.MotorTorque(0); math.Abs(tq-3*kt) > 1e-9 {
		t.Errorf("left wheel torque %.3f N·m, want 3 A × %.2f", tq, kt)
	}
	pitch, _ := r.Balance.Pitch()
	if pitch >= 0 {
		t.Errorf("driving the wheels forward from rest tipped the body %.3f rad, want backwards", pitch)
	}
	tl := left.Telemetry()
	// The status left up to 20 ms ago, while the wheel spun up.
	if tl.Status.At.IsZero() || math.Abs(tl.Status.ERPM-r.Balance.ERPM(0)) > 0.25*math.Abs(r.Balance.ERPM(0)) || tl.Status.ERPM <= 0 {
		t.Errorf("VESC 68 status ERPM %.0f (at %v), model %.0f", tl.Status.ERPM, tl.Status.At, r.Balance.ERPM(0))
	}
	s, err := imu.Sense()
	if err != nil {
		t.Fatal(err)
	}
	if s.Gyro[1] >= -0.1 {
		t.Errorf("QMI8658 pitch rate %.3f rad/s while tipping back at %.3f", s.Gyro[1], r.Balance.Truth().(msg.SimBalance).PitchRate)
	}
}

// The arms: a goal written with the Feetech driver moves the joint model,
// and the present position read back is the model's.
func TestArmFeetechEndToEnd(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 4})
	port, err := r.Board(robot.ArmsLeftPart).Hardware().UART("ttyAMA0")
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ftdrv.New(port, ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	model := fb.Model()
	var errs []error
	done := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	goals := []float64{0, math.Pi / 2, -math.Pi / 2, 0, 0} // hold the rest pose
	goals[arm.Elbow] = -math.Pi / 3
	for i, q := range goals {
		fb.SetGoal(ftdrv.Goal{ID: uint8(i + 1), Position: model.Steps(q)}, done)
		fb.SetTorque(uint8(i+1), true, done)
	}
	runFor(t, ex, 2*time.Second)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	q := r.Arms[0].Positions()
	if math.Abs(q[arm.Elbow]+math.Pi/3) > 0.02 || math.Abs(q[arm.ShoulderLift]-math.Pi/2) > 0.05 {
		t.Errorf("joints %.3f, want elbow −π/3 and the shoulder hanging", q)
	}
	var present ftdrv.Present
	fb.ReadPresent(uint8(arm.Elbow+1), func(p ftdrv.Present, err error) { present = p; done(err) })
	runFor(t, ex, 10*time.Millisecond)
	if got := model.Radians(present.Position); len(errs) > 0 || math.Abs(got-r.Arms[0].Positions()[arm.Elbow]) > 2/model.StepsPerRadian() {
		t.Errorf("present position %.4f rad (%v), model %.4f", got, errs, r.Arms[0].Positions()[arm.Elbow])
	}
	if present.Load == 0 {
		t.Error("the elbow holding the forearm out reports no load")
	}
	// Limit the elbow's torque to 10 % (0.29 N·m) and the forearm, which
	// needs about 1.5 N·m held out, sinks.
	fb.WriteRegister(uint8(arm.Elbow+1), ftdrv.RegMaxTorque, []byte{100, 0}, done)
	runFor(t, ex, time.Second)
	if q := r.Arms[0].Positions()[arm.Elbow]; q < -0.5 {
		t.Errorf("elbow at 10 %% torque stays at %.3f rad, want sunk towards hanging", q)
	}
	if e := r.Arms[0].Efforts()[arm.Elbow]; math.Abs(e) > 0.1*r.Arms[0].Joint(arm.Elbow).Params().StallTorque+1e-9 {
		t.Errorf("elbow effort %.3f N·m beyond its 10 %% limit", e)
	}
	// The right arm, never commanded, is limp: no torque, and its forearm
	// no longer where New put it.
	for i, e := range r.Arms[1].Efforts() {
		if e != 0 {
			t.Errorf("uncommanded right arm: joint %d effort %g", i, e)
		}
	}
	if q := r.Arms[1].Positions()[arm.Elbow]; math.Abs(q+math.Pi/2) < 0.1 {
		t.Errorf("uncommanded right elbow still at %.3f", q)
	}
}

// A Feetech goal with a speed moves the joint at that speed; one with a
// goal time gets there in that time.
func TestArmFeetechSpeedAndTime(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 9})
	port, _ := r.Board(robot.ArmsLeftPart).Hardware().UART("ttyAMA0")
	fb, err := ftdrv.New(port, ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	model := fb.Model()
	done := func(err error) {
		if err != nil {
			t.Error(err)
		}
	}
	hold := []float64{0, math.Pi / 2, -math.Pi / 2, 0, 0}
	for i, q := range hold {
		fb.SetGoal(ftdrv.Goal{ID: uint8(i + 1), Position: model.Steps(q)}, done)
		fb.SetTorque(uint8(i+1), true, done)
	}
	runFor(t, ex, time.Second)
	elbow := uint8(arm.Elbow + 1)
	// 400 steps/s is 0.614 rad/s: half a second covers 0.307 rad.
	start := r.Arms[0].Positions()[arm.Elbow]
	fb.SetGoal(ftdrv.Goal{ID: elbow, Position: model.Steps(0), Speed: 400}, done)
	runFor(t, ex, 500*time.Millisecond)
	want := 0.5 * 400 / model.StepsPerRadian()
	if got := r.Arms[0].Positions()[arm.Elbow] - start; math.Abs(got-want) > 0.1*want {
		t.Errorf("at 400 steps/s for 0.5 s the elbow moved %.3f rad, want %.3f", got, want)
	}
	// Back to −π/2 in 800 ms (speed register cleared).
	fb.SetGoal(ftdrv.Goal{ID: elbow, Position: model.Steps(-math.Pi / 2)}, done)
	fb.WriteRegister(elbow, ftdrv.RegGoalTime, []byte{byte(800 & 0xff), byte(800 >> 8)}, done)
	from := r.Arms[0].Positions()[arm.Elbow]
	runFor(t, ex, 400*time.Millisecond)
	mid := r.Arms[0].Positions()[arm.Elbow]
	runFor(t, ex, 600*time.Millisecond)
	end := r.Arms[0].Positions()[arm.Elbow]
	if half := (from - math.Pi/2) / 2; math.Abs(mid-half) > 0.15*math.Abs(from+math.Pi/2) {
		t.Errorf("goal time 800 ms: %.3f after 400 ms (from %.3f), want about halfway, %.3f", mid, from, half)
	}
	if math.Abs(end+math.Pi/2) > 0.02 {
		t.Errorf("goal time 800 ms: %.3f after 1 s, want −π/2", end)
	}
}

// Hobby servos on the arms' PCA9685: a pulse on channel 2 (the elbow)
// written by the PCA9685 driver moves the joint, overriding the Feetech
// bus; the arm's INA219 sees the servos' supply current.
func TestArmPCA9685EndToEnd(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 7})
	i2c, err := r.Board(robot.ArmsRightPart).Hardware().I2C(1)
	if err != nil {
		t.Fatal(err)
	}
	pca, err := pcadrv.New(i2c, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Hold the shoulder hanging and bend the elbow to −45°: the STS-class
	// joints map 500–2500 µs onto a full turn, 1500 µs at the centre.
	us := func(rad float64) time.Duration {
		return time.Duration((1500 + rad/(2*math.Pi)*2000) * float64(time.Microsecond))
	}
	for ch, q := range []float64{0, math.Pi / 2, -math.Pi / 4} {
		if err := pca.SetPulse(ch, us(q)); err != nil {
			t.Fatal(err)
		}
	}
	runFor(t, ex, 2*time.Second)
	q := r.Arms[1].Positions()
	if math.Abs(q[arm.Elbow]+math.Pi/4) > 0.02 || math.Abs(q[arm.ShoulderLift]-math.Pi/2) > 0.05 {
		t.Errorf("joints %.3f, want the shoulder at π/2 and the elbow at −π/4", q)
	}
	if e := r.Arms[1].Efforts()[arm.Elbow]; math.Abs(e) < 0.1 {
		t.Errorf("elbow holding the forearm at −45° makes %.3f N·m", e)
	}
	ina, err := inadrv.New(i2c, &inadrv.Opts{Addr: 0x41})
	if err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, 10*time.Millisecond)
	rd, err := ina.Sense()
	if err != nil {
		t.Fatal(err)
	}
	// 0.15 A of electronics plus the holding servos' share of 2.7 A stall.
	if rd.Current < 0.2 || rd.BusVoltage > robot.ArmSupplyV || rd.BusVoltage < robot.ArmSupplyV-0.5 {
		t.Errorf("arm supply %+v, want a few hundred mA at just under %.0f V", rd, robot.ArmSupplyV)
	}
}

// Pulling an encoder's cable stops its counts while the track turns on;
// plugging it back resumes them.
func TestEncoderCableCut(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 8})
	hw := r.Board(robot.TracksPart).Hardware()
	en, _ := hw.GPIO(robot.TracksLeftEnable)
	_ = en.Out(gpio.High)
	pca, _ := robot.TracksPWM(hw)
	_ = pca.SetDuty(robot.TracksLeftRPWMCh, 0.5)
	pa, _ := hw.GPIO(robot.TracksLeftEncA)
	pb, _ := hw.GPIO(robot.TracksLeftEncB)
	d, err := encdrv.New(pa.(encdrv.Pin), pb.(encdrv.Pin), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runFor(t, ex, 500*time.Millisecond)
	if err := r.World().CutLink("tracks/encoder/left"); err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, time.Millisecond)
	before, travel := d.Count(), r.Tracks.TrackTravel(tracks.Left)
	runFor(t, ex, 500*time.Millisecond)
	if d.Count() != before || r.Tracks.TrackTravel(tracks.Left) <= travel+0.1 {
		t.Errorf("cable out: count %d → %d while the track moved %.3f m", before, d.Count(), r.Tracks.TrackTravel(tracks.Left)-travel)
	}
	if err := r.World().RestoreLink("tracks/encoder/left"); err != nil {
		t.Fatal(err)
	}
	runFor(t, ex, 100*time.Millisecond)
	if d.Count() <= before {
		t.Errorf("cable back: count %d, was %d", d.Count(), before)
	}
}

// Disturbances over the bus: cutting the head IMU's link makes the driver
// fail with a NACK; pushing the balance base knocks it over; killing a track
// motor stops its current.
func TestDisturbances(t *testing.T) {
	br := mem.NewBroker()
	b := br.Connect(nil)
	defer b.Close()
	r, ex := newRobot(t, robot.Options{Seed: 5, Bus: b})
	call := func(req msg.SimDisturbRequest) {
		t.Helper()
		var resp msg.SimDisturbResponse
		var got bool
		bus.CallAsyncJSON(b, msg.ServiceSimDisturb, req, time.Second, ex, func(rsp msg.SimDisturbResponse, err error) {
			if err != nil {
				t.Error(err)
			}
			resp, got = rsp, true
		})
		runFor(t, ex, time.Millisecond)
		if !got || !resp.Success {
			t.Fatalf("%+v: %+v", req, resp)
		}
	}
	i2c, _ := r.Board(robot.HeadPart).Hardware().I2C(1)
	call(msg.SimDisturbRequest{Kind: msg.DisturbCutLink, Target: "head/i2c/0x68"})
	var nack *twin.NACKError
	if _, err := mpudrv.New(i2c, nil); !errors.As(err, &nack) {
		t.Errorf("MPU6050 with its link cut: %v, want a NACK", err)
	}
	call(msg.SimDisturbRequest{Kind: msg.DisturbRestoreLink, Target: "head/i2c/0x68"})
	if _, err := mpudrv.New(i2c, nil); err != nil {
		t.Errorf("restored: %v", err)
	}
	call(msg.SimDisturbRequest{Kind: msg.DisturbPush, Target: "balance", Force: [3]float64{80}, DurationS: 0.2})
	runFor(t, ex, 2*time.Second)
	if !r.Balance.Fallen() {
		p, _ := r.Balance.Pitch()
		t.Errorf("unpowered base pushed with 80 N for 0.2 s did not fall (pitch %.3f)", p)
	}
	call(msg.SimDisturbRequest{Kind: msg.DisturbKill, Target: "tracks/left_motor"})
	r.Tracks.SetDrive(tracks.Left, 1, true) // as if the bridge drove it
	r.World().Step()
	if r.Tracks.MotorCurrent(tracks.Left) != 0 {
		t.Error("a killed track motor draws current")
	}
	// A whole servo bus unplugged: the driver's ping goes unanswered.
	port, _ := r.Board(robot.ArmsRightPart).Hardware().UART("ttyAMA0")
	fb, err := ftdrv.New(port, ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	call(msg.SimDisturbRequest{Kind: msg.DisturbCutLink, Target: "arms_right/feetech"})
	var pingErr error
	pinged := false
	fb.Ping(3, func(err error) { pingErr, pinged = err, true })
	runFor(t, ex, 100*time.Millisecond)
	if !pinged || pingErr == nil {
		t.Errorf("ping on an unplugged bus: answered %v, error %v", pinged, pingErr)
	}
	call(msg.SimDisturbRequest{Kind: msg.DisturbRestoreLink, Target: "arms_right/feetech"})
	pinged = false
	fb.Ping(3, func(err error) { pingErr, pinged = err, true })
	runFor(t, ex, 100*time.Millisecond)
	if !pinged || pingErr != nil {
		t.Errorf("ping after plugging back: answered %v, error %v", pinged, pingErr)
	}
	for _, name := range []string{"arms_left/feetech/6", "balance/can/68", "tracks/encoder/right", "head/pwm/tilt"} {
		call(msg.SimDisturbRequest{Kind: msg.DisturbCutLink, Target: name})
		call(msg.SimDisturbRequest{Kind: msg.DisturbRestoreLink, Target: name})
	}
}

// Ground truth reaches the bus for every model.
func TestGroundTruth(t *testing.T) {
	br := mem.NewBroker()
	b := br.Connect(nil)
	defer b.Close()
	_, ex := newRobot(t, robot.Options{Seed: 6, Bus: b, TruthRate: 50})
	seen := map[string]int{}
	_, _ = b.Subscribe(msg.TopicSimAllTruth, bus.QoS{Depth: 100}, ex, func(m bus.Msg) { seen[m.Topic]++ })
	var tr msg.SimTracks
	_, _ = bus.SubscribeJSON(b, msg.SimTruthTopic("tracks"), bus.QoS{}, ex, func(_ string, v msg.SimTracks) { tr = v })
	runFor(t, ex, 200*time.Millisecond)
	for _, m := range []string{"head", "arm_left", "arm_right", "tracks", "balance"} {
		if n := seen[msg.SimTruthTopic(m)]; n != 10 {
			t.Errorf("%s: %d truth messages in 0.2 s at 50 Hz, want 10", m, n)
		}
	}
	if tr.BatteryV < 26 {
		t.Errorf("tracks truth %+v", tr)
	}
}

// The same seed gives the same trajectory, bit for bit, including the
// twins' timers and noise; and pacing to the wall clock changes nothing.
func TestDeterminism(t *testing.T) {
	run := func(seed uint64, speed float64, d time.Duration) uint64 {
		ex := executor.New(&executor.Options{Clock: clock.NewVirtual(clock.Epoch()), Speed: speed})
		r, _ := newRobot(t, robot.Options{Exec: ex, Seed: seed, Hash: true})
		// Something for the physics to do: the tracks driving, the head
		// moving, the VESCs commanded.
		hw := r.Board(robot.TracksPart).Hardware()
		en, _ := hw.GPIO(robot.TracksLeftEnable)
		_ = en.Out(gpio.High)
		pca, _ := robot.TracksPWM(hw)
		_ = pca.SetDuty(robot.TracksLeftRPWMCh, 0.7)
		hp, _ := r.Board(robot.HeadPart).Hardware().PWM(robot.HeadTiltPin)
		_ = hp.PWM(0.09, 50)
		can0, _ := r.Board(robot.BalancePart).Hardware().CAN("can0")
		_ = can0.Send(vescdrv.CommandFrame(1, robot.VESCLeftID, 2000)) // SET_CURRENT 2 A
		// Fold in what a driver reads from a noisy sensor, so the seed
		// shows: the twins add noise, the physics does not.
		spi, _ := r.Board(robot.BalancePart).Hardware().SPI(0, 0)
		imu, err := qmidrv.New(spi, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		read := ex.Every(10*time.Millisecond, func() {
			s, err := imu.Sense()
			if err != nil {
				t.Error(err)
			}
			for _, v := range append(s.Accel[:], s.Gyro[:]...) {
				_ = binary.Write(h, binary.LittleEndian, v)
			}
		})
		defer read.Stop()
		runFor(t, ex, d)
		return r.World().Hash() ^ h.Sum64()
	}
	a, b := run(11, 0, time.Second), run(11, 0, time.Second)
	if a != b {
		t.Errorf("seed 11 twice: %#x, %#x", a, b)
	}
	if c := run(12, 0, time.Second); c == a {
		t.Error("seeds 11 and 12 give the same trajectory")
	}
	if fast, paced := run(11, 0, 200*time.Millisecond), run(11, 1, 200*time.Millisecond); fast != paced {
		t.Errorf("speed 0 %#x, speed 1 %#x", fast, paced)
	}
}

func TestNeedsExecutor(t *testing.T) {
	if _, err := robot.New(robot.Options{}); err == nil {
		t.Error("a robot without an executor was built")
	}
}

func BenchmarkRobotStep(b *testing.B) {
	r, _ := newRobot(b, robot.Options{Seed: 1})
	w := r.World()
	for i := 0; i < b.N; i++ {
		w.Step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
}

// BenchmarkRobotSecond runs one simulated second of the whole robot on the
// executor, twins' timers included (IMU sampling, VESC status), and reports
// the real-time factor: simulated seconds per wall second.
func BenchmarkRobotSecond(b *testing.B) {
	r, ex := newRobot(b, robot.Options{Seed: 1})
	hw := r.Board(robot.TracksPart).Hardware()
	en, _ := hw.GPIO(robot.TracksLeftEnable)
	_ = en.Out(gpio.High)
	pca, _ := robot.TracksPWM(hw)
	_ = pca.SetDuty(robot.TracksLeftRPWMCh, 0.5)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		runFor(b, ex, time.Second)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rtf")
	// Per second of CPU time: what a core of its own would give, on a
	// machine shared with other work.
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "cpu-rtf")
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestNodeBoardGivesTheHeadItsCamera(t *testing.T) {
	r, ex := newRobot(t, robot.Options{})
	prov, ok := r.NodeBoard(robot.HeadPart).(camera.Provider)
	if !ok {
		t.Fatal("the head's node board is not a camera.Provider")
	}
	cam, err := prov.Camera()
	if err != nil {
		t.Fatal(err)
	}
	var frames []camera.Frame
	if err := cam.Open(camera.Config{Width: 32, Height: 24, FPS: 10}, ex, func(f camera.Frame) { frames = append(frames, f) }); err != nil {
		t.Fatal(err)
	}
	defer cam.Close()
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if len(frames) < 9 || len(frames) > 11 || frames[0].Width != 32 || frames[0].Height != 24 {
		t.Fatalf("%d frames in 1 s at 10 fps, first %dx%d", len(frames), frames[0].Width, frames[0].Height)
	}
	for _, p := range []robot.Part{robot.ArmsLeftPart, robot.TracksPart, robot.BalancePart} {
		if _, ok := r.NodeBoard(p).(camera.Provider); ok {
			t.Errorf("%s's board has a camera", p)
		}
	}
}

// A world step allocates nothing, with the arms moving (their servos
// report a new present state every step), the tracks driven and the
// sensors sampled: at 1 kHz an allocation per step is a thousand a
// simulated second for the collector.
func TestWorldStepAllocatesNothing(t *testing.T) {
	r, ex := newRobot(t, robot.Options{Seed: 5})
	port, err := r.Board(robot.ArmsLeftPart).Hardware().UART("ttyAMA0")
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ftdrv.New(port, ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	model := fb.Model()
	for i := range arm.NumJoints {
		fb.SetGoal(ftdrv.Goal{ID: uint8(i + 1), Position: model.Steps(0.6), Speed: 200}, func(error) {})
		fb.SetTorque(uint8(i+1), true, func(error) {})
	}
	hw := r.Board(robot.TracksPart).Hardware()
	en, _ := hw.GPIO(robot.TracksLeftEnable)
	_ = en.Out(gpio.High)
	pca, _ := robot.TracksPWM(hw)
	_ = pca.SetDuty(robot.TracksLeftRPWMCh, 0.5)
	runFor(t, ex, 100*time.Millisecond)
	w := r.World()
	before := r.Arms[0].Positions()
	// One run of 200 steps: AllocsPerRun rounds down per run, so an
	// allocation every few steps would not show in a per-step count.
	steps := func() {
		for range 200 {
			w.Step()
		}
	}
	if n := testing.AllocsPerRun(3, steps); n != 0 {
		t.Errorf("200 world steps allocate %v times", n)
	}
	if after := r.Arms[0].Positions(); after[arm.Elbow] == before[arm.Elbow] {
		t.Error("the arm did not move during the measured steps")
	}
}
