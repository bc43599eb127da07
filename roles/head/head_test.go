package head_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/robot"
	simcam "github.com/saint-os/saint/sim/twin/camera"
)

const headDegree = math.Pi / 180

// headRig is the simulated robot with the head role running on its head
// board, the board carrying the rendered camera.
type headRig struct {
	roletest.Rig
	robot *robot.Robot
	board *simboard.Board
	role  rolekit.Role
}

func newHeadRig(t testing.TB, edit func(*roleconfig.Config)) *headRig {
	t.Helper()
	ex := executor.NewVirtual()
	b := mem.New()
	r, err := robot.New(robot.Options{Exec: ex, TruthRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	cfg := roletest.Config(t, "head")
	if edit != nil {
		edit(cfg)
	}
	board := r.Board(robot.HeadPart)
	role, err := roles.New("head")
	if err != nil {
		t.Fatal(err)
	}
	cam := simcam.New(r.Head.Angles, nil)
	if err := role.Start(rolekit.Env{NodeID: "sim-head", Exec: ex, Bus: b, Board: simboard.WithCamera(board, cam),
		Config: cfg, Prefix: msg.TopicPrefix(msg.RoleHead, "")}); err != nil {
		t.Fatal(err)
	}
	return &headRig{Rig: roletest.Rig{T: t, Ex: ex, Bus: b}, robot: r, board: board, role: role}
}

// servoPWM reads the PWM a head servo gets: from its header pin, or from
// the PCA9685 channel of a servo with no pin.
func (g *headRig) servoPWM(s headServo) (freq, duty float64, on bool) {
	if s.bcm == 0 {
		return g.board.PCA9685().PWMState(s.channel)
	}
	return g.board.PWMState(s.bcm)
}

// servoAngle reads the angle a servo is commanded to from its pulse.
func (g *headRig) servoAngle(s headServo) (float64, bool) {
	freq, duty, on := g.servoPWM(s)
	if !on || freq == 0 {
		return 0, false
	}
	return (duty/freq*1e6 - 1500) / 1000 * s.travel / 2, true
}

// truth returns the physical head's pan, tilt and roll in degrees.
func (g *headRig) truth() [3]float64 {
	a := g.robot.Head.Angles()
	return [3]float64{a[0] / headDegree, a[1] / headDegree, a[2] / headDegree}
}

// headServo is one of the head's servos as head.yaml wires it: on a header
// pin, or (bcm 0) on a channel of the head's PCA9685, whose 12-bit counts
// (4.9 µs at 50 Hz) make the angle a servo gets coarser by resolution.
type headServo struct {
	name       string
	bcm        int
	channel    int
	travel     float64
	resolution float64 // degrees per PWM step
}

func (s headServo) String() string {
	if s.bcm == 0 {
		return fmt.Sprintf("%s servo (PCA9685 channel %d)", s.name, s.channel)
	}
	return fmt.Sprintf("%s servo (GPIO%d)", s.name, s.bcm)
}

// headServos are the head's pan, tilt and roll servos (head.yaml).
var headServos = [3]headServo{
	{name: "pan", bcm: 12, travel: 360},
	{name: "tilt", bcm: 13, travel: 180},
	{name: "roll", channel: robot.HeadRollChannel, travel: 90, resolution: 90.0 / 2000 * 1e6 / (4096 * 50)},
}

// TestHeadMoveFollowsTheProfileAndArrives commands a move and watches the
// servo pulses every millisecond: no axis moves faster than max_velocity ×
// speed, the move takes the trapezoid's time (d/v + v/a), and the physical
// head ends on the commanded angles.
func TestHeadMoveFollowsTheProfileAndArrives(t *testing.T) {
	for _, tc := range []struct {
		speed float64
		goal  [3]float64
	}{
		{1, [3]float64{90, 30, -20}},
		{0.5, [3]float64{-60, -40, 15}},
	} {
		g := newHeadRig(t, nil)
		vmax := 180 * tc.speed // head.yaml max_velocity × speed
		const amax = 720.0
		// The longest axis sets the move's duration.
		d := 0.0
		for _, v := range tc.goal {
			d = math.Max(d, math.Abs(v))
		}
		want := d/vmax + vmax/amax
		if d < vmax*vmax/amax {
			want = 2 * math.Sqrt(d/amax)
		}
		var prev [3]float64
		var maxRate [3]float64
		arrived := time.Duration(0)
		start := g.Ex.Now()
		sampler := g.Ex.Every(time.Millisecond, func() {
			done := true
			for i, s := range headServos {
				a, on := g.servoAngle(s)
				if !on {
					t.Errorf("%v: pulse off during the move", s)
				}
				maxRate[i] = math.Max(maxRate[i], math.Abs(a-prev[i])/0.001)
				prev[i] = a
				if math.Abs(a-tc.goal[i]) > 1e-6+s.resolution/2 {
					done = false
				}
			}
			if done && arrived == 0 {
				arrived = g.Ex.Now().Sub(start)
			}
		})
		g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: float32(tc.goal[0]), Tilt: float32(tc.goal[1]), Roll: float32(tc.goal[2]), Speed: float32(tc.speed)})
		g.Run(time.Duration((want + 1) * float64(time.Second)))
		sampler.Stop()
		// The profile steps every 20 ms: a step's travel shows in one
		// millisecond sample, so the rate per step is the sample's / 20.
		for i, r := range maxRate {
			// One PWM step of rounding either side of a profile step.
			if perStep := r / 20; perStep > vmax*1.0001+2*headServos[i].resolution/0.020 {
				t.Errorf("speed %g: axis %d moved at %.1f°/s, max %.1f°/s", tc.speed, i, perStep, vmax)
			}
		}
		if got := arrived.Seconds(); math.Abs(got-want) > 0.045 {
			t.Errorf("speed %g: the profile arrived after %.3f s, want %.3f s (d/v + v/a)", tc.speed, got, want)
		}
		for i, a := range g.truth() {
			if math.Abs(a-tc.goal[i]) > 1 {
				t.Errorf("speed %g: physical axis %d at %.2f°, commanded %.1f°", tc.speed, i, a, tc.goal[i])
			}
		}
	}
}

func TestHeadClampsToConfiguredLimitsAndAlerts(t *testing.T) {
	g := newHeadRig(t, func(c *roleconfig.Config) {
		c.Limits["pan"] = []any{-30, 30}
		c.Limits["tilt"] = []any{-20, 45}
	})
	alerts := roletest.Collect[msg.ConsoleAlert](t, g.Bus, g.Ex, msg.NodeAlertTopic("sim-head"))
	motion := roletest.Collect[msg.HeadMotion](t, g.Bus, g.Ex, msg.TopicHeadMotion)
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 100, Tilt: -60, Roll: 10, Speed: 1})
	g.Run(2 * time.Second)
	want := [3]float64{30, -20, 10}
	for i, a := range g.truth() {
		if math.Abs(a-want[i]) > 1 {
			t.Errorf("physical axis %d at %.2f°, want the limit %.0f°", i, a, want[i])
		}
	}
	if len(*alerts) != 1 || (*alerts)[0].Level != msg.AlertWarning || (*alerts)[0].Source != "sim-head" {
		t.Fatalf("alerts %+v, want one warning from sim-head", *alerts)
	}
	last := (*motion)[len(*motion)-1]
	if !slices.Equal(last.Clamped, []string{"pan", "tilt"}) || last.Target != (msg.HeadAngles{Pan: 30, Tilt: -20, Roll: 10}) {
		t.Errorf("motion %+v, want pan and tilt clamped to target (30, -20, 10)", last)
	}
	// A command within limits clears the clamp report.
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 10, Speed: 1})
	g.Run(100 * time.Millisecond)
	if last := (*motion)[len(*motion)-1]; len(last.Clamped) != 0 {
		t.Errorf("clamped %v after a command within the limits", last.Clamped)
	}
	// A stream at 50 Hz clamped on pan: one alert when it starts, one
	// when tilt is clamped too, then one every 10 s while it stays so.
	*alerts = nil
	stream := g.Ex.Every(20*time.Millisecond, func() {
		tilt := float32(0)
		if len(*alerts) >= 1 { // from the command after the first alert
			tilt = -50
		}
		g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 50, Tilt: tilt, Speed: 1})
	})
	g.Run(12 * time.Second)
	stream.Stop()
	var got []string
	for _, a := range *alerts {
		got = append(got, a.Message)
	}
	// At 0.02 s (pan), 1.02 s (tilt joins, after the 1 s minimum) and
	// 11.02 s.
	const pan, both = "head command clamped to the configured limits: pan 50 -> 30 deg",
		"head command clamped to the configured limits: pan 50 -> 30 deg, tilt -50 -> -20 deg"
	if wantAlerts := []string{pan, both, both}; !slices.Equal(got, wantAlerts) {
		t.Errorf("alerts over 12 s of clamped commands:\n%q\nwant\n%q", got, wantAlerts)
	}
}

func TestHeadStateMotionAndSensorsAtTheirRates(t *testing.T) {
	g := newHeadRig(t, nil)
	states := roletest.Collect[msg.HeadState](t, g.Bus, g.Ex, msg.TopicHeadState)
	motion := roletest.Collect[msg.HeadMotion](t, g.Bus, g.Ex, msg.TopicHeadMotion)
	sensors := roletest.Collect[msg.SensorReadings](t, g.Bus, g.Ex, msg.TopicHeadSensors)
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Tilt: 30, Speed: 1})
	g.Run(2 * time.Second)
	if n := len(*states); n != 40 {
		t.Errorf("%d HeadStates in 2 s, want 40 (state_rate_hz 20)", n)
	}
	if n := len(*motion); n != 40 {
		t.Errorf("%d HeadMotions in 2 s, want 40", n)
	}
	// The MPU6050 samples at 1 kHz / (1 + 19) = 50 Hz and raises INT once
	// a sample; allow the first sample's phase.
	if n := len(*sensors); n < 99 || n > 100 {
		t.Errorf("%d sensor readings in 2 s, want 100 (sensors_rate_hz 50)", n)
	}
	if s := (*states)[len(*states)-1]; s.Tilt != 30 || s.Pan != 0 || s.CameraActive {
		t.Errorf("last state %+v, want tilt 30, camera off", s)
	}
	mid := (*motion)[5] // 300 ms in, half way
	if !mid.Moving || mid.Target.Tilt != 30 || mid.Position.Tilt <= 0 || mid.Position.Tilt >= 30 || mid.Velocity.Tilt <= 0 {
		t.Errorf("motion at 300 ms %+v, want moving towards tilt 30", mid)
	}
	if last := (*motion)[len(*motion)-1]; last.Moving {
		t.Errorf("still moving after 2 s: %+v", last)
	}
	// The IMU, tilted 30° nose down with the head, sees gravity there.
	last := (*sensors)[len(*sensors)-1]
	byName := map[string]msg.SensorReading{}
	for _, r := range last.Readings {
		byName[r.Name] = r
	}
	if p := byName["imu_pitch"]; !p.Valid || math.Abs(p.Value/headDegree-30) > 2 {
		t.Errorf("imu_pitch %+v, want 30° (valid)", p)
	}
	if a := byName["imu_accel_z"]; !a.Valid || math.Abs(a.Value-9.80665*math.Cos(30*headDegree)) > 0.5 {
		t.Errorf("imu_accel_z %+v, want g·cos 30°", a)
	}
}

func TestHeadHomeReturnsToZero(t *testing.T) {
	g := newHeadRig(t, nil)
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 45, Tilt: 20, Roll: -10, Speed: 1})
	g.Run(time.Second)
	// The router's head home: a HeadCommand to (0, 0, 0), speed 1 unless
	// the client gave one.
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Speed: 1})
	g.Run(1500 * time.Millisecond)
	for i, a := range g.truth() {
		if math.Abs(a) > 1 {
			t.Errorf("axis %d at %.2f° after home", i, a)
		}
	}
}

// TestHeadDeadmanHolds: with no command for command_timeout_ms the head
// keeps its servos powered on the last position and reports the timeout;
// the next command moves it again.
func TestHeadDeadmanHolds(t *testing.T) {
	g := newHeadRig(t, nil)
	motion := roletest.Collect[msg.HeadMotion](t, g.Bus, g.Ex, msg.TopicHeadMotion)
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 30, Tilt: 60, Speed: 1})
	g.Run(900 * time.Millisecond)
	if (*motion)[len(*motion)-1].CommandTimeout {
		t.Error("command timeout reported before command_timeout_ms")
	}
	g.Run(3 * time.Second)
	if !(*motion)[len(*motion)-1].CommandTimeout {
		t.Error("no command timeout reported 3.9 s after the last command")
	}
	for i, s := range headServos[:2] {
		a, on := g.servoAngle(s)
		if want := []float64{30, 60}[i]; !on || math.Abs(a-want) > 1e-6 {
			t.Errorf("%v at %.2f° (pulse on %v), want holding %.0f°", s, a, on, want)
		}
	}
	// Tilted 60°, gravity pulls the head down: the powered servo holds it.
	if tr := g.truth(); math.Abs(tr[1]-60) > 1.5 {
		t.Errorf("physical tilt %.2f° after the timeout, want held at 60°", tr[1])
	}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 0, Tilt: 0, Speed: 1})
	g.Run(100 * time.Millisecond)
	if last := (*motion)[len(*motion)-1]; last.CommandTimeout || !last.Moving {
		t.Errorf("after a new command: %+v, want moving and no timeout", last)
	}
}

func TestHeadStopReleasesServos(t *testing.T) {
	g := newHeadRig(t, nil)
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 10, Speed: 1})
	g.Run(200 * time.Millisecond)
	g.role.Stop()
	for _, s := range headServos {
		if _, _, on := g.servoPWM(s); on {
			t.Errorf("%v: PWM still on after Stop", s)
		}
	}
	states := roletest.Collect[msg.HeadState](t, g.Bus, g.Ex, msg.TopicHeadState)
	g.Run(time.Second)
	if len(*states) != 0 {
		t.Errorf("%d states after Stop", len(*states))
	}
}

// headHorizonRow is the first row of column x, from the top, that is not the
// sky's full blue.
func headHorizonRow(im msg.Image, x int) int {
	for y := 0; y < int(im.Height); y++ {
		if im.Data[y*int(im.Step)+3*x+2] != 255 {
			return y
		}
	}
	return int(im.Height)
}

func TestHeadCameraStreamsTheViewWhileEnabled(t *testing.T) {
	g := newHeadRig(t, func(c *roleconfig.Config) {
		c.Camera.Resolution = []int{160, 120}
		c.Camera.Framerate = 10
	})
	images := roletest.Collect[msg.Image](t, g.Bus, g.Ex, msg.TopicHeadCameraImageRaw)
	states := roletest.Collect[msg.HeadState](t, g.Bus, g.Ex, msg.TopicHeadState)
	g.Run(time.Second)
	if len(*images) != 0 {
		t.Fatalf("%d frames before the camera command enabled the stream", len(*images))
	}
	g.Publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: true})
	g.Run(time.Second)
	if n := len(*images); n != 10 {
		t.Errorf("%d frames in 1 s, want 10 (framerate 10)", n)
	}
	if !(*states)[len(*states)-1].CameraActive {
		t.Error("HeadState.camera_active false while streaming")
	}
	level := (*images)[len(*images)-1]
	if level.Width != 160 || level.Height != 120 || level.Encoding != msg.ImageRGB8 || level.Step != 480 || len(level.Data) != 160*120*3 {
		t.Fatalf("frame %dx%d %s step %d, %d bytes; want 160x120 rgb8 step 480", level.Width, level.Height, level.Encoding, level.Step, len(level.Data))
	}
	// Look down 20°: the horizon rises in the picture.
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Tilt: 20, Speed: 1})
	g.Run(time.Second)
	down := (*images)[len(*images)-1]
	if a, b := headHorizonRow(level, 10), headHorizonRow(down, 10); b >= a-20 {
		t.Errorf("horizon at row %d level and %d tilted 20° down; want it well above", a, b)
	}
	// Pan left: the view changes.
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 60, Tilt: 20, Speed: 1})
	g.Run(time.Second)
	if bytes.Equal(down.Data, (*images)[len(*images)-1].Data) {
		t.Error("the picture did not change when the head panned")
	}
	if st := (*images)[len(*images)-1].Header.Stamp.Time(); !st.Equal(g.Ex.Now()) {
		t.Errorf("last frame stamped %v, want the executor's %v", st, g.Ex.Now())
	}
	g.Publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: false})
	g.Run(100 * time.Millisecond)
	n := len(*images)
	g.Run(time.Second)
	if len(*images) != n {
		t.Errorf("%d frames after the camera was disabled", len(*images)-n)
	}
	if (*states)[len(*states)-1].CameraActive {
		t.Error("HeadState.camera_active true after disabling")
	}
}

func TestHeadRefusesLimitsOutsideTheServoTravel(t *testing.T) {
	ex := executor.NewVirtual()
	board, err := simboard.New(&simboard.Options{Profile: simboard.Head, Exec: ex})
	if err != nil {
		t.Fatal(err)
	}
	cfg := roletest.Config(t, "head")
	cfg.Limits["roll"] = []any{-60, 60} // the roll servo travels ±45°
	role, _ := roles.New("head")
	if err := role.Start(rolekit.Env{NodeID: "n", Exec: ex, Bus: mem.New(), Board: board, Config: cfg, Prefix: "/saint/head"}); err == nil {
		role.Stop()
		t.Fatal("limits beyond the servo's travel accepted")
	}
	if _, _, on := board.PWMState(12); on {
		t.Error("servo pins left driven after a failed Start")
	}
}

// TestHeadWithoutIMUOrCamera: a head whose MPU6050 does not answer still
// moves and publishes its sensors, marked invalid, at sensors_rate_hz; on
// a board without a camera the camera command changes nothing.
func TestHeadWithoutIMUOrCamera(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	board, err := simboard.New(&simboard.Options{Profile: simboard.Head, Exec: ex})
	if err != nil {
		t.Fatal(err)
	}
	if err := board.SetI2CConnected(0x68, false); err != nil {
		t.Fatal(err)
	}
	role, _ := roles.New("head")
	if err := role.Start(rolekit.Env{NodeID: "n", Exec: ex, Bus: b, Board: board, Config: roletest.Config(t, "head"), Prefix: "/saint/head"}); err != nil {
		t.Fatal(err)
	}
	defer role.Stop()
	sensors := roletest.Collect[msg.SensorReadings](t, b, ex, msg.TopicHeadSensors)
	states := roletest.Collect[msg.HeadState](t, b, ex, msg.TopicHeadState)
	images := roletest.Collect[msg.Image](t, b, ex, msg.TopicHeadCameraImageRaw)
	if err := b.Publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 20, Speed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(*sensors); n != 50 {
		t.Errorf("%d sensor messages in 1 s without the IMU, want 50", n)
	}
	for _, r := range (*sensors)[len(*sensors)-1].Readings {
		if r.Valid {
			t.Errorf("reading %s valid without the IMU", r.Name)
		}
	}
	if last := (*states)[len(*states)-1]; last.Pan != 20 || last.CameraActive {
		t.Errorf("state %+v, want pan 20 and no camera", last)
	}
	if len(*images) != 0 {
		t.Errorf("%d frames from a board without a camera", len(*images))
	}
}

func TestHeadRefusesNonNumbers(t *testing.T) {
	g := newHeadRig(t, nil)
	motion := roletest.Collect[msg.HeadMotion](t, g.Bus, g.Ex, msg.TopicHeadMotion)
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 40, Speed: 1})
	g.Run(time.Second)
	// JSON has no NaN: a command with a non-number does not decode, and a
	// field of the wrong type neither.
	if err := g.Bus.Publish(msg.TopicHeadCmd, map[string]any{"pan": "left", "tilt": 10}); err != nil {
		t.Fatal(err)
	}
	g.Run(time.Second)
	if last := (*motion)[len(*motion)-1]; last.Target != (msg.HeadAngles{Pan: 40}) || last.Moving {
		t.Errorf("motion %+v after an undecodable command, want still at pan 40", last)
	}
}

// BenchmarkHeadCameraFrame is one 640×480 frame of the simulated camera
// through the head role onto the bus to a subscriber in the same process:
// the render (the head turning, so every frame is rendered) and the
// delivery (a copy of the Image, no JSON in process).
func BenchmarkHeadCameraFrame(b *testing.B) {
	ex := executor.NewVirtual()
	mb := mem.New()
	board, err := simboard.New(&simboard.Options{Profile: simboard.Head, Exec: ex})
	if err != nil {
		b.Fatal(err)
	}
	pan := 0.2
	cam := simcam.New(func() [3]float64 { pan += 1e-3; return [3]float64{pan, 0.1, 0} }, nil)
	cfg := roletest.Config(b, "head")
	cfg.Camera.Framerate = 10
	role, _ := roles.New("head")
	if err := role.Start(rolekit.Env{NodeID: "n", Exec: ex, Bus: mb, Board: simboard.WithCamera(board, cam), Config: cfg, Prefix: "/saint/head"}); err != nil {
		b.Fatal(err)
	}
	defer role.Stop()
	frames := 0
	if _, err := bus.SubscribeJSON(mb, msg.TopicHeadCameraImageRaw, bus.QoS{Depth: 4}, ex, func(_ string, im msg.Image) {
		if len(im.Data) == 640*480*3 {
			frames++
		}
	}); err != nil {
		b.Fatal(err)
	}
	if err := mb.Publish(msg.TopicHeadCameraCmd, msg.HeadCameraCommand{Enable: true}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := ex.RunFor(context.Background(), 100*time.Millisecond); err != nil {
			b.Fatal(err)
		}
	}
	if frames < b.N {
		b.Fatalf("%d frames for %d iterations", frames, b.N)
	}
}

// Eyes on two PCA9685 channels follow eyes_pan and eyes_tilt at once,
// within their range, and the state reports them.
func TestHeadEyes(t *testing.T) {
	g := newHeadRig(t, func(c *roleconfig.Config) {
		c.PWMOutputs["eyes_pan_servo"] = roleconfig.PWMOutput{PCA9685: 0x40, Channel: 2, Frequency: 50}
		c.PWMOutputs["eyes_tilt_servo"] = roleconfig.PWMOutput{PCA9685: 0x40, Channel: 3, Frequency: 50}
	})
	states := roletest.Collect[msg.HeadState](t, g.Bus, g.Ex, msg.TopicHeadState)
	eye := func(ch int) float64 { // degrees from the pulse, 180° over 500–2500 µs
		f, d, on := g.board.PCA9685().PWMState(ch)
		if !on {
			t.Fatalf("eye channel %d off", ch)
		}
		return (d/f*1e6 - 1500) / 1000 * 90
	}
	if a := eye(2); math.Abs(a) > 0.5 {
		t.Errorf("eye pan at start %.2f°, want centred", a)
	}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 10, EyesPan: 20, EyesTilt: -50, Speed: 1})
	g.Run(100 * time.Millisecond)
	// One 12-bit count at 50 Hz is 0.44° of a 180° servo.
	if a := eye(2); math.Abs(a-20) > 0.5 {
		t.Errorf("eye pan %.2f°, want 20", a)
	}
	if a := eye(3); math.Abs(a+30) > 0.5 {
		t.Errorf("eye tilt %.2f°, want -30 (its limit)", a)
	}
	g.Run(200 * time.Millisecond)
	if s := (*states)[len(*states)-1]; s.EyesPan != 20 || s.EyesTilt != -30 {
		t.Errorf("state %+v, want eyes 20 / -30", s)
	}
}

// TestHeadAdvertisesTheLimitsItClamps: the limits the head publishes
// predict what it does with a command: the values they clamp are the
// ones its motion target shows cut, to the same values.
func TestHeadAdvertisesTheLimitsItClamps(t *testing.T) {
	g := newHeadRig(t, func(c *roleconfig.Config) {
		c.Limits["pan"] = []any{-30, 30}
		c.Limits["tilt"] = []any{-20, 45}
	})
	limits := roletest.Collect[msg.CommandLimits](t, g.Bus, g.Ex, msg.LimitsTopic("/saint/head"))
	motion := roletest.Collect[msg.HeadMotion](t, g.Bus, g.Ex, msg.TopicHeadMotion)
	g.Run(1500 * time.Millisecond)
	if len(*limits) < 1 {
		t.Fatal("no limits published in 1.5 s")
	}
	l := (*limits)[len(*limits)-1]
	cmd := map[string]float64{"pan": 100, "tilt": -60, "roll": 10}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 100, Tilt: -60, Roll: 10, Speed: 1})
	g.Run(100 * time.Millisecond)
	got := l.Apply(cmd)
	want := []msg.Clamp{{Field: "pan", Requested: 100, Applied: 30}, {Field: "tilt", Requested: -60, Applied: -20}}
	if !slices.Equal(got, want) {
		t.Errorf("advertised limits clamp %+v, want %+v", got, want)
	}
	last := (*motion)[len(*motion)-1]
	for _, c := range got {
		applied := map[string]float32{"pan": last.Target.Pan, "tilt": last.Target.Tilt}[c.Field]
		if float64(applied) != c.Applied {
			t.Errorf("%s: the head applies %v, its limits say %v", c.Field, applied, c.Applied)
		}
	}
}
