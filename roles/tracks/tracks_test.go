package tracks_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
	"github.com/saint-os/saint/sim/model/battery"
	"github.com/saint-os/saint/sim/robot"
)

// truthSample is the tracks' ground truth with the time it was published.
type truthSample struct {
	t time.Duration // since the rig started
	msg.SimTracks
}

// tracksRig runs the tracks role on the simulated robot and records what
// it publishes and the ground truth.
type tracksRig struct {
	roletest.Rig
	robot  *robot.Robot
	role   rolekit.Role
	start  time.Time
	truth  []truthSample
	odom   []msg.Odometry
	states []msg.TrackState
	amps   []msg.MotorCurrent
	alerts []msg.ConsoleAlert
}

func newTracksRig(t testing.TB, edit func(*roleconfig.Config)) *tracksRig {
	t.Helper()
	g := &tracksRig{Rig: roletest.Rig{T: t, Ex: executor.NewVirtual(), Bus: mem.New()}}
	r, err := robot.New(robot.Options{Exec: g.Ex, Bus: g.Bus, Seed: 7, TruthRate: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	g.robot, g.start = r, g.Ex.Now()
	sub := func(topic string, f func(bus.Msg)) {
		if _, err := g.Bus.Subscribe(topic, bus.QoS{Depth: 100000}, g.Ex, f); err != nil {
			t.Fatal(err)
		}
	}
	sub(msg.SimTruthTopic("tracks"), func(m bus.Msg) {
		var s msg.SimTracks
		if m.Decode(&s) == nil {
			g.truth = append(g.truth, truthSample{g.Ex.Now().Sub(g.start), s})
		}
	})
	sub(msg.TopicTracksOdom, decodeInto(&g.odom))
	sub(msg.TopicTracksState, decodeInto(&g.states))
	sub(msg.TopicTracksMotorCurrent, decodeInto(&g.amps))
	sub(msg.NodeAlertTopic("sim-tracks"), decodeInto(&g.alerts))

	cfg := roletest.Config(t, "tracks")
	if edit != nil {
		edit(cfg)
	}
	role, err := roles.New("tracks")
	if err != nil {
		t.Fatal(err)
	}
	env := rolekit.Env{NodeID: "sim-tracks", Exec: g.Ex, Bus: g.Bus, Board: r.Board(robot.TracksPart),
		Config: cfg, Prefix: "/saint/tracks"}
	var startErr error
	g.Ex.Post(func() { startErr = role.Start(env) })
	g.Run(10 * time.Millisecond)
	if startErr != nil {
		t.Fatal(startErr)
	}
	g.role = role
	t.Cleanup(func() { g.Ex.Post(role.Stop); g.Run(time.Millisecond) })
	return g
}

func decodeInto[T any](dst *[]T) func(bus.Msg) {
	return func(m bus.Msg) {
		var v T
		if m.Decode(&v) == nil {
			*dst = append(*dst, v)
		}
	}
}

func (g *tracksRig) now() time.Duration { return g.Ex.Now().Sub(g.start) }

// drive sends cmd_vel every 100 ms for d, as a teleoperation source does.
func (g *tracksRig) drive(v, w float64, d time.Duration) {
	g.T.Helper()
	for end := g.now() + d; g.now() < end; {
		g.Publish(msg.TopicTracksCmdVel, msg.Twist{Linear: msg.Vector3{X: v}, Angular: msg.Vector3{Z: w}})
		g.Run(min(100*time.Millisecond, end-g.now()))
	}
}

// truthSince returns the ground truth samples from time from on.
func (g *tracksRig) truthSince(from time.Duration) []truthSample {
	for i, s := range g.truth {
		if s.t >= from {
			return g.truth[i:]
		}
	}
	return nil
}

func (g *tracksRig) lastTruth() msg.SimTracks { return g.truth[len(g.truth)-1].SimTracks }

func (g *tracksRig) lastState() msg.TrackState { return g.states[len(g.states)-1] }

// maxAccel is the largest |Δspeed/Δt| of the ground truth over windows
// of w, from time from to time to.
func maxAccel(tr []truthSample, w, from, to time.Duration) (acc float64, at time.Duration) {
	j := 0
	for i := range tr {
		if tr[i].t < from || tr[i].t > to {
			continue
		}
		for j < i && tr[i].t-tr[j].t > w {
			j++
		}
		if dt := (tr[i].t - tr[j].t).Seconds(); dt >= w.Seconds()*0.99 {
			if a := math.Abs(tr[i].Speed-tr[j].Speed) / dt; a > acc {
				acc, at = a, tr[i].t
			}
		}
	}
	return acc, at
}

// enablesLow reports whether both H-bridges' enable lines are low.
func (g *tracksRig) enablesLow() bool {
	b := g.robot.Board(robot.TracksPart)
	l, err1 := b.Level(robot.TracksLeftEnable)
	r, err2 := b.Level(robot.TracksRightEnable)
	return err1 == nil && err2 == nil && !bool(l) && !bool(r)
}

const (
	maxLinearAccel  = 1.0 // tracks.yaml limits.max_linear_accel
	maxAngularAccel = 4.0 // limits.max_angular_accel
	// accelMargin is how far the ground truth's acceleration, over 20 ms,
	// may exceed the limit the reference ramps at: the loop's small
	// transients and the tracks' slip against the floor.
	accelMargin = 1.1
	// angularAccelMargin is the same for the yaw: the turning
	// resistance breaking away adds its own transient.
	angularAccelMargin = 1.15
)

func TestTracksReachCommandedSpeedWithinAccelerationLimit(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	g.drive(0.5, 0, 2*time.Second)

	settled := g.truthSince(time.Second) // 0.5 s of ramp, then settling
	for _, s := range settled {
		if math.Abs(s.Speed-0.5) > 0.01 {
			t.Fatalf("at %v the base runs at %.4f m/s, want 0.5 ± 0.01", s.t, s.Speed)
		}
		if math.Abs(s.YawRate) > 0.01 || math.Abs(s.Heading) > 0.01 {
			t.Fatalf("at %v yaw rate %.4f rad/s, heading %.4f rad: not straight", s.t, s.YawRate, s.Heading)
		}
	}
	if acc, at := maxAccel(g.truth, 20*time.Millisecond, 0, g.now()); acc > maxLinearAccel*accelMargin {
		t.Errorf("acceleration %.3f m/s² at %v, limit %.1f", acc, at, maxLinearAccel)
	}
	// The ramp takes 0.5 s: the base is not at speed before that.
	for _, s := range g.truth {
		if s.t < 400*time.Millisecond && s.Speed > 0.45 {
			t.Fatalf("%.3f m/s at %v: faster than a 1 m/s² ramp allows", s.Speed, s.t)
		}
	}

	st := g.lastState()
	if math.Abs(float64(st.LeftVelocity)-0.5) > 0.01 || math.Abs(float64(st.RightVelocity)-0.5) > 0.01 ||
		!st.MotorsEnabled || st.EStopActive {
		t.Errorf("TrackState %+v, want both tracks at 0.5 m/s, motors enabled", st)
	}
	if n := len(g.states); n < 38 || n > 42 {
		t.Errorf("%d TrackStates in 2 s, want 20 Hz", n)
	}
	od := g.odom[len(g.odom)-1]
	if math.Abs(od.Twist.Twist.Linear.X-0.5) > 0.01 || math.Abs(od.Twist.Twist.Angular.Z) > 0.02 {
		t.Errorf("odometry twist %+v, want 0.5 m/s straight", od.Twist.Twist)
	}
	if od.Header.FrameID != "odom" || od.ChildFrameID != "base_link" || od.Pose.Covariance[0] != 0.001 ||
		od.Pose.Covariance[35] != 0.01 || od.Twist.Covariance[14] != 1e6 {
		t.Errorf("odometry frames or covariance: %+v", od)
	}
	if n := len(g.odom); n < 98 || n > 101 {
		t.Errorf("%d odometry messages in 2 s, want 50 Hz", n)
	}
	// motor_current carries the battery INA219's current at its 10 Hz,
	// and each bridge's supply current from its own INA219: what the
	// motor takes, by power balance, V·I of the motor over the battery's.
	if n := len(g.amps); n < 19 || n > 22 {
		t.Fatalf("%d motor_current messages in 2 s, want 10 Hz", n)
	}
	truth := g.lastTruth()
	a := g.amps[len(g.amps)-1]
	if math.Abs(float64(a.Total)-truth.BatteryA) > 0.3 || a.Total < 0.4 {
		t.Errorf("motor_current %+v, battery draws %.3f A", a, truth.BatteryA)
	}
	for side, got := range [2]float32{a.Left, a.Right} {
		want := truth.Voltage[side] * truth.Current[side] / truth.BatteryV
		if want < 0.02 || math.Abs(float64(got)-want) > 0.02+0.1*want {
			t.Errorf("track %d current %.3f A, want the bridge's %.3f A", side, got, want)
		}
	}
	if st := g.lastState(); st.LeftCurrent == 0 || st.RightCurrent == 0 || math.Abs(float64(st.LeftCurrent-a.Left)) > 0.05 {
		t.Errorf("TrackState currents %v / %v, want the sensors'", st.LeftCurrent, st.RightCurrent)
	}
}

func TestTracksReverseAndCurve(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	g.drive(-0.3, 0.5, 2*time.Second)
	s := g.lastTruth()
	// With the effective gauge, the commanded curvature is what the base
	// does within the slip's variation with turn rate.
	if math.Abs(s.Speed+0.3) > 0.01 || math.Abs(s.YawRate-0.5) > 0.05 {
		t.Errorf("truth %.3f m/s, %.3f rad/s; want -0.3 m/s, 0.5 rad/s", s.Speed, s.YawRate)
	}
}

// TestTracksSpinInPlace spins the base with the fixture's calibration
// (slip in proportion to the turn rate, gauge_factor) and with a turn slip
// of its own (turn_slip), which the role adds to the tracks' difference
// over the first few hundredths of a rad/s: the floor does not take that
// step up at once, and the ramp of the tracks' difference must keep the
// angular acceleration within the limit.
func TestTracksSpinInPlace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                  string
		gaugeFactor, turnSlip float64
	}{{"fixture", 0, 0}, {"turn_slip", 1.0, 0.018}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var edit func(*roleconfig.Config)
			if c.gaugeFactor != 0 {
				edit = func(cfg *roleconfig.Config) {
					d := cfg.Params["drive"].(map[string]any)
					d["gauge_factor"], d["turn_slip"] = c.gaugeFactor, c.turnSlip
				}
			}
			g := newTracksRig(t, edit)
			g.drive(0, 1, 2*time.Second)
			for _, s := range g.truthSince(600 * time.Millisecond) {
				if math.Abs(s.YawRate-1) > 0.05 {
					t.Fatalf("yaw rate %.3f rad/s at %v, want 1 ± 0.05", s.YawRate, s.t)
				}
			}
			s := g.lastTruth()
			if math.Hypot(s.X, s.Y) > 0.02 || math.Abs(s.Speed) > 0.01 {
				t.Errorf("spinning in place the base moved to (%.3f, %.3f) at %.3f m/s", s.X, s.Y, s.Speed)
			}
			if s.TrackSpeed[0] > -0.1 || s.TrackSpeed[1] < 0.1 {
				t.Errorf("track speeds %v: want left backwards, right forwards", s.TrackSpeed)
			}
			acc, at := angularAccel(g.truth, 20*time.Millisecond)
			t.Logf("largest angular acceleration %.2f rad/s² at %v", acc, at)
			if acc > maxAngularAccel*angularAccelMargin {
				t.Errorf("angular acceleration %.2f rad/s² at %v, limit %.1f", acc, at, maxAngularAccel)
			}
		})
	}
}

func angularAccel(tr []truthSample, w time.Duration) (acc float64, at time.Duration) {
	j := 0
	for i := range tr {
		for j < i && tr[i].t-tr[j].t > w {
			j++
		}
		if dt := (tr[i].t - tr[j].t).Seconds(); dt >= w.Seconds()*0.99 {
			if a := math.Abs(tr[i].YawRate-tr[j].YawRate) / dt; a > acc {
				acc, at = a, tr[i].t
			}
		}
	}
	return acc, at
}

// yawOf returns the heading of an odometry quaternion.
func yawOf(q msg.Quaternion) float64 {
	return math.Atan2(2*(q.W*q.Z+q.X*q.Y), 1-2*(q.Y*q.Y+q.Z*q.Z))
}

func wrapAngle(a float64) float64 { return math.Atan2(math.Sin(a), math.Cos(a)) }

func TestTracksOdometryFollowsASquare(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	for range 4 {
		g.drive(0.5, 0, 1200*time.Millisecond) // about 0.6 m
		g.drive(0, 1.5, 1050*time.Millisecond) // about a quarter turn
		g.drive(0, 0, 300*time.Millisecond)
	}
	truth, od := g.lastTruth(), g.odom[len(g.odom)-1]
	travelled := 0.0
	for i := 1; i < len(g.truth); i++ {
		travelled += math.Hypot(g.truth[i].X-g.truth[i-1].X, g.truth[i].Y-g.truth[i-1].Y)
	}
	posErr := math.Hypot(od.Pose.Pose.Position.X-truth.X, od.Pose.Pose.Position.Y-truth.Y)
	yawErr := math.Abs(wrapAngle(yawOf(od.Pose.Pose.Orientation) - truth.Heading))
	t.Logf("square: %.2f m travelled, truth (%.3f, %.3f, %.3f rad), odometry (%.3f, %.3f, %.3f rad): drift %.3f m, %.3f rad",
		travelled, truth.X, truth.Y, truth.Heading, od.Pose.Pose.Position.X, od.Pose.Pose.Position.Y,
		yawOf(od.Pose.Pose.Orientation), posErr, yawErr)
	if travelled < 2 {
		t.Fatalf("the base travelled %.2f m, want a 0.6 m square", travelled)
	}
	if math.Hypot(truth.X, truth.Y) > 0.1 || math.Abs(wrapAngle(truth.Heading)) > 0.2 {
		t.Errorf("the base ended at (%.3f, %.3f, %.3f rad): not a closed square", truth.X, truth.Y, truth.Heading)
	}
	// Stated drift: 1 % of the distance travelled, 0.05 rad of heading.
	if posErr > 0.01*travelled || yawErr > 0.05 {
		t.Errorf("odometry drift %.3f m (limit %.3f) and %.3f rad (limit 0.05)", posErr, 0.01*travelled, yawErr)
	}
}

// speedErrorUnderPush drives at 0.5 m/s, pushes the base backwards with
// 60 N for 1.5 s from t = 1 s, and returns the largest track speed error
// in the last second of the push.
func speedErrorUnderPush(t *testing.T, edit func(*roleconfig.Config)) (maxErr float64, g *tracksRig) {
	g = newTracksRig(t, edit)
	g.drive(0.5, 0, time.Second)
	pushAt := g.now()
	g.Ex.Post(func() {
		if err := g.robot.World().Disturb(msg.SimDisturbRequest{Kind: msg.DisturbPush, Target: "tracks",
			Force: [3]float64{-60, 0, 0}, DurationS: 1.5}); err != nil {
			t.Error(err)
		}
	})
	g.drive(0.5, 0, 1500*time.Millisecond)
	for _, s := range g.truthSince(pushAt + 500*time.Millisecond) {
		if s.t > pushAt+1500*time.Millisecond-10*time.Millisecond {
			break
		}
		for _, v := range s.TrackSpeed {
			maxErr = max(maxErr, math.Abs(v-0.5))
		}
	}
	return maxErr, g
}

func TestTracksSpeedLoopRejectsAPush(t *testing.T) {
	t.Parallel()
	closed, g := speedErrorUnderPush(t, nil)
	// Feed-forward alone, for comparison: the push slows the tracks.
	open, _ := speedErrorUnderPush(t, func(c *roleconfig.Config) {
		sc := c.Params["speed_control"].(map[string]any)
		sc["kp"], sc["ki"] = 0, 0
	})
	t.Logf("track speed error under a 60 N push: %.4f m/s closed loop, %.4f m/s feed-forward only", closed, open)
	if closed > 0.01 {
		t.Errorf("closed loop: track speed off by %.4f m/s under the push, want ≤ 0.01", closed)
	}
	if open < 3*closed || open < 0.02 {
		t.Errorf("feed-forward only: off by %.4f m/s; the push is too weak to show the loop (closed %.4f)", open, closed)
	}
	// After the push the speed comes back to 0.5 m/s.
	g.drive(0.5, 0, 500*time.Millisecond)
	if v := g.lastTruth().Speed; math.Abs(v-0.5) > 0.01 {
		t.Errorf("after the push: %.4f m/s", v)
	}
}

func TestTracksEStopLatchesUntilCleared(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, coastOnStop)
	g.drive(0.5, 0, time.Second)
	g.Publish(msg.TopicTracksEStop, msg.EStop{Active: true, Source: msg.SourceWebSocket, Reason: "test"})
	estopAt := g.now()
	g.Run(10 * time.Millisecond)
	if !g.enablesLow() {
		t.Fatal("H-bridge enables still high 10 ms after the emergency stop")
	}
	if st := g.lastState(); !st.EStopActive || st.MotorsEnabled {
		t.Fatalf("TrackState %+v right after the emergency stop", st)
	}
	// Commands keep coming (a source that did not hear of the stop);
	// the motors stay off and the base coasts to a stop: rolling
	// resistance (C_rr 0.03 of 20 kg) against the base and the tracks'
	// and rotors' inertia (about 44 kg in all) stops it from 0.5 m/s in
	// about 3.5 s.
	g.drive(0.5, 0, 4*time.Second)
	stoppedAt := time.Duration(-1)
	for _, s := range g.truthSince(estopAt + 10*time.Millisecond) {
		if s.Current != [2]float64{} || s.Voltage != [2]float64{} {
			t.Fatalf("at %v the motors carry %v A at %v V during the emergency stop", s.t, s.Current, s.Voltage)
		}
		if stoppedAt < 0 && math.Abs(s.Speed) < 0.005 {
			stoppedAt = s.t
		}
	}
	if stoppedAt < 0 || stoppedAt-estopAt > 4*time.Second {
		t.Fatalf("stopped %v after the emergency stop, want within 4 s", stoppedAt-estopAt)
	}
	t.Logf("stopped %v after the emergency stop", stoppedAt-estopAt)
	if s := g.lastTruth(); math.Abs(s.Speed) > 0.005 || !g.enablesLow() {
		t.Fatalf("4 s into the emergency stop with commands: %.3f m/s", s.Speed)
	}

	// Another engage changes nothing; a release does.
	g.Publish(msg.TopicTracksEStop, msg.EStop{Active: true, Source: msg.SourceSafety})
	g.Run(100 * time.Millisecond)
	if !g.lastState().EStopActive {
		t.Fatal("a second engage released the stop")
	}
	g.Publish(msg.TopicTracksEStop, msg.EStop{Active: false, Source: msg.SourceWebSocket})
	g.Run(100 * time.Millisecond)
	if st := g.lastState(); st.EStopActive || !st.MotorsEnabled {
		t.Fatalf("TrackState %+v after the release", st)
	}
	// Nothing moves until a command comes after the release.
	if v := g.lastTruth().Speed; math.Abs(v) > 0.005 {
		t.Fatalf("%.3f m/s after the release without a new command", v)
	}
	g.drive(0.5, 0, 1200*time.Millisecond)
	if v := g.lastTruth().Speed; math.Abs(v-0.5) > 0.01 {
		t.Fatalf("%.3f m/s after the release and a new command, want 0.5", v)
	}
}

func TestTracksEStopBrakeMode(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, func(c *roleconfig.Config) { c.Params["estop_mode"] = "brake" })
	g.drive(0.5, 0, time.Second)
	g.Publish(msg.TopicTracksEStop, msg.EStop{Active: true, Source: msg.SourceSafety})
	estopAt := g.now()
	g.drive(0.5, 0, 700*time.Millisecond)
	stoppedAt := time.Duration(-1)
	for _, s := range g.truthSince(estopAt + 10*time.Millisecond) {
		if s.Voltage != [2]float64{} {
			t.Fatalf("at %v %v V across the motors while braking", s.t, s.Voltage)
		}
		if stoppedAt < 0 && math.Abs(s.Speed) < 0.005 {
			stoppedAt = s.t
		}
	}
	t.Logf("braked to a stop %v after the emergency stop", stoppedAt-estopAt)
	if stoppedAt < 0 || stoppedAt-estopAt > 500*time.Millisecond {
		t.Fatalf("stopped %v after the emergency stop, want within 0.5 s when braking", stoppedAt-estopAt)
	}
	if !g.enablesLow() || g.lastState().MotorsEnabled {
		t.Fatalf("standing still in the emergency stop: enables low %v, %+v", g.enablesLow(), g.lastState())
	}
}

func TestTracksCommandTimeoutRampsToStop(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	g.drive(0.5, 0, 1200*time.Millisecond)
	last := g.now() - 100*time.Millisecond // the last cmd_vel
	g.Run(1500 * time.Millisecond)
	// Until the 500 ms timeout the base keeps going.
	for _, s := range g.truthSince(last) {
		if s.t < last+480*time.Millisecond && s.Speed < 0.49 {
			t.Fatalf("slowing at %v, %v after the last command: before cmd_timeout_ms", s.t, s.t-last)
		}
	}
	// Then it ramps down at the deceleration limit: stopped 0.5 s later.
	stoppedAt := time.Duration(-1)
	for _, s := range g.truthSince(last) {
		if stoppedAt < 0 && math.Abs(s.Speed) < 0.005 {
			stoppedAt = s.t
		}
	}
	if stoppedAt < 0 || stoppedAt-last > 1200*time.Millisecond {
		t.Fatalf("stopped %v after the last command, want within 1.2 s (0.5 s timeout + 0.5 s ramp)", stoppedAt-last)
	}
	if acc, at := maxAccel(g.truth, 20*time.Millisecond, last, g.now()); acc > maxLinearAccel*accelMargin {
		t.Errorf("deceleration %.3f m/s² at %v, limit %.1f: not a ramp", acc, at, maxLinearAccel)
	}
	if st := g.lastState(); !st.MotorsEnabled || st.EStopActive || math.Abs(float64(st.LeftVelocity)) > 0.001 {
		t.Errorf("TrackState %+v after the timeout, want enabled and still", st)
	}
}

func TestTracksLowBatteryWarnsThenCutsOff(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, coastOnStop)
	bat := g.robot.Tracks.Battery()
	setRest := func(v float64) {
		bat.SetSoC(socForVoltage(bat.Params(), v, g.robot.Tracks.Params().QuiescentA))
	}
	g.drive(0.5, 0, time.Second)

	setRest(25.4) // below the 25.6 V warning, under load a little lower
	g.drive(0.5, 0, 1200*time.Millisecond)
	if len(g.alerts) != 1 || g.alerts[0].Level != msg.AlertWarning {
		t.Fatalf("alerts %+v, want one warning", g.alerts)
	}
	if v := g.lastTruth().Speed; math.Abs(v-0.5) > 0.01 || !g.lastState().MotorsEnabled {
		t.Fatalf("a warning stopped the base: %.3f m/s, %+v", v, g.lastState())
	}

	setRest(24.2) // below the 24.4 V cutoff
	cutAt := g.now()
	g.drive(0.5, 0, 1500*time.Millisecond)
	if len(g.alerts) != 2 || g.alerts[1].Level != msg.AlertCritical {
		t.Fatalf("alerts %+v, want a critical cutoff", g.alerts)
	}
	if st := g.lastState(); st.MotorsEnabled || st.EStopActive {
		t.Fatalf("TrackState %+v at cutoff, want motors disabled without an emergency stop", st)
	}
	if !g.enablesLow() {
		t.Fatal("H-bridges enabled at cutoff")
	}
	// The cutoff tripped after trip_ms (500 ms) and one reading.
	for _, s := range g.truthSince(cutAt + 700*time.Millisecond) {
		if s.Current != [2]float64{} {
			t.Fatalf("motor current %v at %v, %v after the battery fell to cutoff", s.Current, s.t, s.t-cutAt)
		}
	}

	// Recovered above cutoff + hysteresis (24.8 V) for release_ms.
	setRest(25.3)
	g.Run(2500 * time.Millisecond)
	if st := g.lastState(); !st.MotorsEnabled {
		t.Fatalf("TrackState %+v after the battery recovered", st)
	}
	g.drive(0.5, 0, 1200*time.Millisecond)
	if v := g.lastTruth().Speed; math.Abs(v-0.5) > 0.01 {
		t.Fatalf("%.3f m/s after recovery, want 0.5", v)
	}
}

func TestTracksStopLeavesMotorsSafe(t *testing.T) {
	t.Parallel()
	g := newTracksRig(t, nil)
	g.drive(0.5, 0, 700*time.Millisecond)
	g.Ex.Post(g.role.Stop)
	g.Run(10 * time.Millisecond)
	b := g.robot.Board(robot.TracksPart)
	for _, ch := range []int{robot.TracksLeftRPWMCh, robot.TracksLeftLPWMCh, robot.TracksRightRPWMCh, robot.TracksRightLPWMCh} {
		if _, duty, on := b.PCA9685().PWMState(ch); on && duty != 0 {
			t.Errorf("PCA9685 channel %d still driven at duty %.3f after Stop", ch, duty)
		}
	}
	// Released, the enable lines are inputs again (their pull-ups may
	// raise them), so the bridges' inputs low is what keeps the motors
	// unpowered: no voltage across them.
	g.Run(100 * time.Millisecond)
	if s := g.lastTruth(); s.Voltage != [2]float64{} {
		t.Errorf("after Stop: %v V across the motors", s.Voltage)
	}
	n := len(g.states)
	g.Run(200 * time.Millisecond)
	if len(g.states) != n {
		t.Error("TrackState still published after Stop")
	}
}

func TestTracksConfigErrorsNameTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		edit  func(*roleconfig.Config)
		field string
	}{
		{func(c *roleconfig.Config) { c.Params["drive"].(map[string]any)["gauge"] = -1 }, "drive.gauge"},
		{func(c *roleconfig.Config) { c.Params["drive"].(map[string]any)["encoder_cpr"] = 0 }, "drive.encoder_cpr"},
		{func(c *roleconfig.Config) { c.Params["drive"].(map[string]any)["speed_bandwidth_hz"] = 100 }, "drive.speed_bandwidth_hz"},
		{func(c *roleconfig.Config) { c.Params["speed_control"].(map[string]any)["max_duty"] = 2 }, "speed_control.max_duty"},
		{func(c *roleconfig.Config) { c.Params["speed_control"].(map[string]any)["kpp"] = 2 }, "kpp"},
		{func(c *roleconfig.Config) { c.Limits["max_linear_accel"] = "fast" }, "limits.max_linear_accel"},
		{func(c *roleconfig.Config) { c.Params["cmd_timeout_ms"] = -5 }, "cmd_timeout_ms"},
		{func(c *roleconfig.Config) { c.Params["cmd_timeout_ms"] = 3.6e6 }, "cmd_timeout_ms"},
		{func(c *roleconfig.Config) { c.Params["link_timeout_ms"] = 10 }, "link_timeout_ms"},
		{func(c *roleconfig.Config) {
			c.Params["odometry"].(map[string]any)["pose_covariance_diagonal"] = []any{1.0}
		}, "odometry.pose_covariance_diagonal"},
		{func(c *roleconfig.Config) { c.Params["estop_mode"] = "float" }, "estop_mode"},
	} {
		ex := executor.NewVirtual()
		r, err := robot.New(robot.Options{Exec: ex, TruthRate: -1})
		if err != nil {
			t.Fatal(err)
		}
		cfg := roletest.Config(t, "tracks")
		tc.edit(cfg)
		role, _ := roles.New("tracks")
		err = role.Start(rolekit.Env{NodeID: "n", Exec: ex, Bus: mem.New(), Board: r.Board(robot.TracksPart), Config: cfg, Prefix: "/saint/tracks"})
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("error %v, want one naming %s", err, tc.field)
		}
		// A failed start gives every pin back.
		if err := r.Board(robot.TracksPart).Claim(robot.TracksLeftEnable, board.DirOutput, "test"); err != nil {
			t.Errorf("after a failed start: %v", err)
		}
	}
}

func TestTracksDriveFaultOnLostEncoderOrDeadMotor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		breakIt, restore func(*robot.Robot) error
	}{
		{"encoder cable pulled",
			func(r *robot.Robot) error { return r.World().CutLink("tracks/encoder/left") },
			func(r *robot.Robot) error { return r.World().RestoreLink("tracks/encoder/left") }},
		// One dead motor at cruise goes unnoticed (the other track drags
		// its track along, 1.5 % slower); both dead, the base coasts down.
		{"motors dead",
			func(r *robot.Robot) error { return r.World().Kill("tracks") },
			func(r *robot.Robot) error { return r.World().Revive("tracks") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newTracksRig(t, coastOnStop)
			g.drive(0.5, 0, time.Second)
			g.Ex.Post(func() {
				if err := tc.breakIt(g.robot); err != nil {
					t.Error(err)
				}
			})
			brokeAt := g.now()
			g.drive(0.5, 0, 1500*time.Millisecond)
			if len(g.alerts) != 1 || g.alerts[0].Level != msg.AlertError || !strings.Contains(g.alerts[0].Message, "track not responding") {
				t.Fatalf("alerts %+v, want one drive fault error", g.alerts)
			}
			if st := g.lastState(); st.MotorsEnabled || !g.enablesLow() {
				t.Fatalf("TrackState %+v, enables low %v: want the drive held", st, g.enablesLow())
			}
			// The loop did not run away on a track it could not see: its
			// correction (max_correction 0.25 of 27 V, 20 V per m/s) can
			// add at most 0.34 m/s to the 0.5 m/s commanded.
			for _, s := range g.truthSince(brokeAt) {
				if s.Speed > 0.7 || s.TrackSpeed[0] > 0.85 {
					t.Fatalf("at %v: base %.3f m/s, left track %.3f m/s", s.t, s.Speed, s.TrackSpeed[0])
				}
			}
			// Latched: commands do nothing until a release, after the repair.
			g.Ex.Post(func() {
				if err := tc.restore(g.robot); err != nil {
					t.Error(err)
				}
			})
			g.drive(0.5, 0, 300*time.Millisecond)
			if g.lastState().MotorsEnabled {
				t.Fatal("the drive fault cleared itself")
			}
			g.Publish(msg.TopicTracksEStop, msg.EStop{Active: false, Source: msg.SourceWebSocket})
			g.Run(50 * time.Millisecond)
			g.drive(0.5, 0, 1200*time.Millisecond)
			if v := g.lastTruth().Speed; math.Abs(v-0.5) > 0.01 || !g.lastState().MotorsEnabled {
				t.Fatalf("after repair and release: %.3f m/s, %+v", v, g.lastState())
			}
		})
	}
}

// coastOnStop selects estop_mode coast, for the tests of what the bridges
// do the instant a stop begins (the enables drop at once); the default,
// brake, has its own test.
func coastOnStop(c *roleconfig.Config) { c.Params["estop_mode"] = "coast" }

// socForVoltage is the state of charge at which the sim battery reads v at
// rest, drawing only the electronics' quiescent current.
func socForVoltage(p battery.Params, v, quiescentA float64) float64 {
	return (v + p.Resistance*quiescentA - p.EmptyV) / (p.FullV - p.EmptyV)
}
