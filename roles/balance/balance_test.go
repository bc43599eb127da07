package balance_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/balance"
	"github.com/saint-os/saint/roles/balance/canmsg"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/robot"
	simio "github.com/saint-os/saint/sim/twin/ioboard"
	"github.com/saint-os/saint/sim/twin/vesc"
)

const balDeg = math.Pi / 180

// balanceRig is the simulated robot with the balance role on its balance
// board and the simulated IO board on the other end of ttyAMA0.
type balanceRig struct {
	roletest.Rig
	robot  *robot.Robot
	io     *simio.Board
	role   rolekit.Role
	can    can.Bus // the Orin's end of can0
	canRx  []can.Frame
	imuOff *atomic.Bool
	state  msg.BalanceState
}

// deadIMUBoard is the balance board whose IMU can be silenced (its SPI
// transfers fail), as a chip that stopped answering.
type deadIMUBoard struct {
	*simboard.Board
	off *atomic.Bool
}

func (b deadIMUBoard) Hardware() board.Hardware { return deadIMUHardware{b.Board.Hardware(), b.off} }

type deadIMUHardware struct {
	board.Hardware
	off *atomic.Bool
}

func (h deadIMUHardware) SPI(bus, cs int) (spi.Conn, error) {
	c, err := h.Hardware.SPI(bus, cs)
	return deadIMUConn{c, h.off}, err
}

type deadIMUConn struct {
	spi.Conn
	off *atomic.Bool
}

func (c deadIMUConn) Tx(w, r []byte) error {
	if c.off.Load() {
		return errors.New("no answer")
	}
	return c.Conn.Tx(w, r)
}

func newBalanceRig(t testing.TB, edit func(*roleconfig.Config)) *balanceRig {
	t.Helper()
	ex := executor.NewVirtual()
	b := mem.New()
	r, err := robot.New(robot.Options{Exec: ex, Seed: 7, TruthRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	cfg := roletest.Config(t, "balance")
	if edit != nil {
		edit(cfg)
	}
	bb := r.Board(robot.BalancePart)
	peer, err := bb.UARTPeer("ttyAMA0")
	if err != nil {
		t.Fatal(err)
	}
	io, err := simio.New(ex, peer, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &balanceRig{Rig: roletest.Rig{T: t, Ex: ex, Bus: b}, robot: r, io: io, imuOff: &atomic.Bool{}}
	role, err := roles.New("balance")
	if err != nil {
		t.Fatal(err)
	}
	if err := role.Start(rolekit.Env{NodeID: "sim-balance", Exec: ex, Bus: b, Board: deadIMUBoard{bb, g.imuOff},
		Config: cfg, Prefix: msg.TopicPrefix(msg.RoleBalance, "")}); err != nil {
		t.Fatal(err)
	}
	g.role = role
	t.Cleanup(role.Stop)
	if g.can, err = bb.CANBus("can0"); err != nil {
		t.Fatal(err)
	}
	stop := g.can.Receive(func(f can.Frame, _ time.Time) {
		if !f.Extended && (f.ID == canmsg.IDTelemetryA || f.ID == canmsg.IDTelemetryB) {
			ex.Post(func() { g.canRx = append(g.canRx, f) })
		}
	})
	t.Cleanup(stop)
	if _, err := bus.SubscribeJSON(b, msg.TopicBalanceState, bus.QoS{}, ex, func(_ string, s msg.BalanceState) { g.state = s }); err != nil {
		t.Fatal(err)
	}
	return g
}

// console runs a console line over the bus service.
func (g *balanceRig) console(line string) msg.BalanceConsoleResponse {
	g.T.Helper()
	var resp msg.BalanceConsoleResponse
	var err error
	done := false
	g.Bus.CallAsync(msg.ServiceBalanceConsole, msg.BalanceConsoleRequest{Line: line}, time.Second, g.Ex, func(m bus.Msg, e error) {
		done, err = true, e
		if e == nil {
			err = json.Unmarshal(m.Data, &resp)
		}
	})
	g.Run(5 * time.Millisecond)
	if !done || err != nil {
		g.T.Fatalf("console %q: done %v err %v", line, done, err)
	}
	return resp
}

// lastTelemetryA decodes the latest 0x400 frame.
func (g *balanceRig) lastTelemetryA() canmsg.TelemetryA {
	g.T.Helper()
	for i := len(g.canRx) - 1; i >= 0; i-- {
		if g.canRx[i].ID == canmsg.IDTelemetryA {
			a, err := canmsg.ParseTelemetryA(g.canRx[i])
			if err != nil {
				g.T.Fatal(err)
			}
			return a
		}
	}
	g.T.Fatal("no 0x400 telemetry")
	return canmsg.TelemetryA{}
}

// motorsOff reports whether both VESCs are told to release (zero current
// or off).
func (g *balanceRig) motorsOff() bool {
	for side := 0; side < 2; side++ {
		c := g.robot.VESC(side).Command()
		if c.Mode != vesc.Off && !(c.Mode == vesc.Current && c.Value == 0) {
			return false
		}
	}
	return true
}

// arm puts the ARM switch on and holds the button for 3.2 s.
func (g *balanceRig) arm() {
	g.T.Helper()
	if err := g.io.SetChannel(5, 2000); err != nil {
		g.T.Fatal(err)
	}
	g.Run(50 * time.Millisecond)
	g.io.PressArm(true)
	g.Run(3200 * time.Millisecond)
	g.io.PressArm(false)
	g.Run(50 * time.Millisecond)
}

func (g *balanceRig) mustArm() {
	g.T.Helper()
	g.mustArmAt(0)
}

// mustArmAt arms the base held at pitch (rad) by hand, as a person holds
// it for the 3 s arming hold, letting go when the motors take over.
func (g *balanceRig) mustArmAt(pitch float64) {
	g.T.Helper()
	release := g.hold(pitch)
	g.arm() // the filter finds the pose during the hold
	release()
	if !g.state.Armed || g.lastTelemetryA().State != balance.StateArmed {
		g.T.Fatalf("not armed after a 3 s hold: state %+v", g.state)
	}
}

// hold keeps the body at pitch (rad), as a hand holding it does, until
// the motors take over or release is called.
func (g *balanceRig) hold(pitch float64) (release func()) {
	var hand *executor.Timer
	hand = g.Ex.Every(time.Millisecond, func() {
		if !g.motorsOff() {
			hand.Stop()
			return
		}
		g.robot.Balance.SetPitch(pitch, 0)
	})
	return func() { hand.Stop() }
}

// track records the true pitch every millisecond while running d.
func (g *balanceRig) track(d time.Duration) (maxTilt float64, lastOutside time.Duration) {
	start := g.Ex.Now()
	tm := g.Ex.Every(time.Millisecond, func() {
		p, _ := g.robot.Balance.Pitch()
		maxTilt = math.Max(maxTilt, math.Abs(p))
		if math.Abs(p) > 1*balDeg {
			lastOutside = g.Ex.Now().Sub(start)
		}
	})
	g.Run(d)
	tm.Stop()
	return maxTilt / balDeg, lastOutside
}

func TestBalanceNoSpinAtPowerOn(t *testing.T) {
	g := newBalanceRig(t, nil)
	// Sticks and the ARM switch up, nobody at the button.
	for ch, us := range map[int]uint16{2: 2000, 1: 1800, 5: 2000, 7: 2000} {
		if err := g.io.SetChannel(ch, us); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		g.Run(100 * time.Millisecond)
		if !g.motorsOff() {
			t.Fatalf("at %v the VESCs are told %+v / %+v", time.Duration(i+1)*100*time.Millisecond, g.robot.VESC(0).Command(), g.robot.VESC(1).Command())
		}
	}
	_, v := g.robot.Balance.Position()
	if math.Abs(v) > 1e-6 || g.state.State != "disarmed" || g.lastTelemetryA().State != balance.StateDisarmed {
		t.Errorf("speed %v, state %q: want still and disarmed", v, g.state.State)
	}
}

func TestBalanceArmNeedsAFullHoldWhileUpright(t *testing.T) {
	g := newBalanceRig(t, nil)
	if err := g.io.SetChannel(5, 2000); err != nil {
		t.Fatal(err)
	}
	g.Run(50 * time.Millisecond)
	// Two holds of 2.5 s with a break between: not armed.
	for i := 0; i < 2; i++ {
		g.io.PressArm(true)
		g.Run(2500 * time.Millisecond)
		g.io.PressArm(false)
		g.Run(100 * time.Millisecond)
		if g.state.Armed || !g.motorsOff() {
			t.Fatalf("armed after a %d s hold", 2)
		}
	}
	g.io.PressArm(true)
	g.Run(3100 * time.Millisecond)
	if !g.state.Armed || g.motorsOff() {
		t.Fatalf("not balancing after a 3.1 s hold: %+v", g.state)
	}
	// The IO board shows it: LED pattern 1 (armed), green.
	if led := g.io.Logic().Status().LED; led.Pattern != 1 || led.G != 255 {
		t.Errorf("IO board LED %+v, want the armed pattern", led)
	}
}

// Manual mode (CAN 0x302 = 2) with a fresh 0x300 drives the VESCs' speed
// loops from the command, without balancing.
func TestBalanceManualModeSetsWheelRPM(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	_ = g.can.Send(canmsg.ModeManual.Frame())
	_ = g.can.Send(canmsg.Velocity{SpeedMMPS: 150}.Frame())
	g.Run(5 * time.Millisecond)
	// 0.15 m/s on a 0.0825 m wheel with 15 pole pairs: 260.4 ERPM (the
	// 10 % cap of 2 m/s allows 0.2 m/s).
	want := 0.15 / 0.0825 * 60 / (2 * math.Pi) * 15
	for side := 0; side < 2; side++ {
		c := g.robot.VESC(side).Command()
		if c.Mode != vesc.RPM || math.Abs(c.Value-want) > 1 {
			t.Errorf("VESC %d told %+v, want RPM %.1f", side, c, want)
		}
	}
}

func TestBalanceArmRefusedWhenNotUpright(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.robot.Balance.SetPitch(15*balDeg, 0) // it falls onto its bumper
	g.arm()
	if g.state.Armed || !g.motorsOff() {
		t.Fatalf("armed lying on its bumper: %+v", g.state)
	}
	r := g.console("arm")
	if r.OK || !balContains(r.Output, "not upright") {
		t.Errorf("console arm: %+v, want refused as not upright", r)
	}
	if g.Run(20 * time.Millisecond); !g.motorsOff() {
		t.Error("motors on after a refused arm")
	}
}

func TestBalanceSettlesFrom5Degrees(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	g.Run(time.Second)
	// Tipped to 5° at once: the gyro never saw it happen, so the filter
	// finds the lean from the accelerometer while the loop recovers.
	g.robot.Balance.SetPitch(5*balDeg, 0)
	maxTilt, settle := g.track(5 * time.Second)
	// Tolerances: the lean never grows past 5° + 1°, and it is within ±1°
	// of upright after 2.5 s and stays there.
	if maxTilt > 6 {
		t.Errorf("max tilt %.2f°, want ≤ 6°", maxTilt)
	}
	if settle > 2500*time.Millisecond {
		t.Errorf("settling time (last outside ±1°) %v, want ≤ 2.5 s", settle)
	}
	if g.robot.Balance.Fallen() || !g.state.Armed {
		t.Errorf("fallen %v state %q", g.robot.Balance.Fallen(), g.state.State)
	}
}

func TestBalanceRejectsPush(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	g.Run(500 * time.Millisecond)
	if err := g.robot.World().Disturb(msg.SimDisturbRequest{Kind: msg.DisturbPush, Target: "balance",
		Force: [3]float64{60, 0, 0}, DurationS: 0.2}); err != nil {
		t.Fatal(err)
	}
	maxTilt, settle := g.track(4 * time.Second)
	// A 60 N push for 0.2 s: the lean stays under 10°, back within ±1° in
	// 2.5 s, and the base has moved to take it.
	if maxTilt > 10 || settle > 2500*time.Millisecond || g.robot.Balance.Fallen() {
		t.Errorf("max tilt %.2f°, last outside ±1° at %v, fallen %v", maxTilt, settle, g.robot.Balance.Fallen())
	}
	if maxTilt < 0.5 {
		t.Errorf("max tilt %.2f°: the push did not reach the base", maxTilt)
	}
}

func TestBalanceDrivesForwardOnStick(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	for _, p := range []string{"speed_limit 20", "speed_limit 30"} {
		if r := g.console(p); !r.OK {
			t.Fatalf("%s: %+v", p, r)
		}
	}
	// Full throttle, speed-limit channel at 100 %: 30 % of 2 m/s.
	if err := g.io.SetChannel(7, 2000); err != nil {
		t.Fatal(err)
	}
	if err := g.io.SetChannel(2, 2000); err != nil {
		t.Fatal(err)
	}
	x0, _ := g.robot.Balance.Position()
	g.Run(5 * time.Second)
	x1, v := g.robot.Balance.Position()
	if math.Abs(v-0.6) > 0.12 || x1-x0 < 1.5 {
		t.Errorf("speed %.3f m/s (want 0.6 ± 0.12), travelled %.2f m (want ≥ 1.5)", v, x1-x0)
	}
	if a := g.lastTelemetryA(); math.Abs(float64(a.SpeedMMPS)-600) > 150 {
		t.Errorf("0x400 speed %d mm/s, want ≈ 600", a.SpeedMMPS)
	}
	// Steering right turns right (yaw rate negative).
	if err := g.io.SetChannel(1, 1800); err != nil {
		t.Fatal(err)
	}
	g.Run(2 * time.Second)
	if _, rate := g.robot.Balance.Yaw(); rate > -0.3 {
		t.Errorf("yaw rate %.2f rad/s on a right stick, want clearly negative", rate)
	}
}

func TestBalanceSpeedCapStepsBy10Percent(t *testing.T) {
	g := newBalanceRig(t, nil)
	for _, c := range []struct {
		line string
		ok   bool
		cap  int
	}{
		{"speed_limit 30", false, 10}, {"speed_limit 20", true, 20}, {"speed_limit 25", false, 20},
		{"speed_limit 30", true, 30}, {"speed_limit 10", true, 10}, {"speed_limit 110", false, 10},
	} {
		if r := g.console(c.line); r.OK != c.ok {
			t.Errorf("%s: %+v, want ok %v", c.line, r, c.ok)
		}
		g.Run(150 * time.Millisecond)
		if g.state.SpeedLimit != c.cap {
			t.Errorf("after %s: cap %d %%, want %d %%", c.line, g.state.SpeedLimit, c.cap)
		}
	}
	// At power-on's 10 % the full stick asks 0.2 m/s.
	g.mustArm()
	_ = g.io.SetChannel(7, 2000)
	_ = g.io.SetChannel(2, 2000)
	g.Run(5 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v-0.2) > 0.06 {
		t.Errorf("speed %.3f m/s at the 10 %% cap, want 0.2 ± 0.06", v)
	}
}

func TestBalanceTiltCutoffNeedsManualRearm(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	// With a feeble gain the base cannot hold itself: it leans out to 25°.
	if r := g.console("pid 0.1 0 0"); !r.OK {
		t.Fatal(r)
	}
	g.robot.Balance.SetPitch(3*balDeg, 0)
	var cutAt float64
	tm := g.Ex.Every(time.Millisecond, func() {
		if p, _ := g.robot.Balance.Pitch(); cutAt == 0 && g.motorsOff() {
			cutAt = p / balDeg
		}
	})
	g.Run(3 * time.Second)
	tm.Stop()
	if cutAt < 24 || cutAt > 27 {
		t.Errorf("motors cut at %.2f° of lean, want at the 25° cutoff (±2° of filter lag)", cutAt)
	}
	if g.state.State != "tilt" || g.lastTelemetryA().State != balance.StateTilt {
		t.Errorf("state %q, want tilt", g.state.State)
	}
	// Picked up and set upright: still off until re-armed.
	if r := g.console("pid 2 0 0.15"); !r.OK {
		t.Fatal(r)
	}
	release := g.hold(0)
	g.Run(2 * time.Second)
	if !g.motorsOff() || g.state.State != "tilt" {
		t.Fatalf("set upright: state %q motors off %v, want still cut", g.state.State, g.motorsOff())
	}
	g.mustArm()
	release()
	if maxTilt, _ := g.track(2 * time.Second); maxTilt > 2 {
		t.Errorf("re-armed base leans %.2f°", maxTilt)
	}
}

func TestBalanceWatchdogIOLinkSilent(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	g.io.Close()
	g.Run(35 * time.Millisecond)
	if g.motorsOff() {
		t.Fatal("cut before the 50 ms watchdog")
	}
	g.Run(20 * time.Millisecond)
	if !g.motorsOff() {
		t.Fatal("motors still driven 55 ms after the IO board went silent")
	}
	g.Run(200 * time.Millisecond)
	if g.state.State != "watchdog" || !balContains(g.state.Faults, "link_watchdog") {
		t.Errorf("state %q faults %v", g.state.State, g.state.Faults)
	}
}

func TestBalanceWatchdogIMUSilent(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	g.imuOff.Store(true)
	g.Run(45 * time.Millisecond)
	if g.motorsOff() {
		t.Fatal("cut before the 50 ms watchdog")
	}
	g.Run(10 * time.Millisecond)
	if !g.motorsOff() {
		t.Fatal("motors still driven 55 ms after the IMU went silent")
	}
	g.Run(200 * time.Millisecond)
	if g.state.State != "watchdog" || !balContains(g.state.Faults, "imu_watchdog") {
		t.Errorf("state %q faults %v", g.state.State, g.state.Faults)
	}
	// The IMU back: still off until re-armed.
	g.imuOff.Store(false)
	g.Run(500 * time.Millisecond)
	if !g.motorsOff() {
		t.Error("motors back without a re-arm")
	}
}

func TestBalanceEStopSources(t *testing.T) {
	sources := []struct {
		name       string
		stop, free func(g *balanceRig)
		rearm      bool // show the re-arm (once is enough: it is the same path)
	}{
		{"rc channel 6", func(g *balanceRig) { _ = g.io.SetChannel(6, 2000) }, func(g *balanceRig) { _ = g.io.SetChannel(6, 1000) }, true},
		{"kill switch", func(g *balanceRig) { g.io.SetKill(true) }, func(g *balanceRig) { g.io.SetKill(false) }, false},
		{"can mode 3", func(g *balanceRig) { _ = g.can.Send(canmsg.ModeEStop.Frame()) }, func(g *balanceRig) { _ = g.can.Send(canmsg.ModeBalance.Frame()) }, false},
		{"bus topic", func(g *balanceRig) { _ = g.Bus.Publish(msg.TopicBalanceEStop, msg.EStop{Active: true, Source: "test"}) },
			func(g *balanceRig) {
				_ = g.Bus.Publish(msg.TopicBalanceEStop, msg.EStop{Active: false, Source: "test"})
			}, false},
		{"console", func(g *balanceRig) { g.console("estop") }, func(*balanceRig) {}, false},
	}
	for _, s := range sources {
		t.Run(s.name, func(t *testing.T) {
			g := newBalanceRig(t, nil)
			g.mustArm()
			s.stop(g)
			// The RC path is one receiver frame (4 ms) and one IO period
			// (10 ms) away; every other source is acted on within a loop.
			g.Run(20 * time.Millisecond)
			if !g.motorsOff() {
				t.Fatal("motors driven 20 ms after the emergency stop")
			}
			g.Run(200 * time.Millisecond)
			if g.state.State != "estop" {
				t.Fatalf("state %q, want estop", g.state.State)
			}
			s.free(g)
			g.robot.Balance.SetPitch(0, 0)
			g.Run(500 * time.Millisecond)
			if !g.motorsOff() || g.state.State != "estop" {
				t.Fatalf("released: state %q, motors off %v: want still stopped until re-armed", g.state.State, g.motorsOff())
			}
			if s.rearm {
				g.mustArm()
			}
		})
	}
}

// The emergency stop is checked before anything else in the loop: with a
// kill and a tilt past the cutoff at once, the base reports estop.
func TestBalanceEStopCheckedFirst(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	if r := g.console("tilt_limit 2"); !r.OK {
		t.Fatal(r)
	}
	g.io.SetKill(true)
	g.robot.Balance.SetPitch(10*balDeg, 0)
	g.Run(200 * time.Millisecond)
	if g.state.State != "estop" || !g.motorsOff() {
		t.Errorf("state %q motors off %v, want estop", g.state.State, g.motorsOff())
	}
}

func TestBalanceCANCommandTimeoutRevertsToRC(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	for _, p := range []string{"speed_limit 20", "speed_limit 30"} {
		g.console(p)
	}
	_ = g.io.SetChannel(7, 2000)
	_ = g.io.SetChannel(2, 2000) // RC asks 0.6 m/s
	// The Orin asks 0 at 20 Hz: it wins while fresh.
	tm := g.Ex.Every(50*time.Millisecond, func() { _ = g.can.Send(canmsg.Velocity{SpeedMMPS: 0}.Frame()) })
	g.Run(2 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v) > 0.08 || g.state.Source != "can" {
		t.Fatalf("under CAN command: speed %.3f source %q, want ≈ 0 from can", v, g.state.Source)
	}
	tm.Stop()
	g.Run(450 * time.Millisecond)
	if g.state.Source != "can" {
		t.Errorf("source %q 450 ms after the last 0x300, want can until 500 ms", g.state.Source)
	}
	g.Run(6 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v-0.6) > 0.12 || g.state.Source != "rc" {
		t.Errorf("after the CAN timeout: speed %.3f source %q, want 0.6 from rc", v, g.state.Source)
	}
	if !balContains(g.state.Faults, "can_timeout") {
		t.Errorf("faults %v, want can_timeout", g.state.Faults)
	}
}

func TestBalanceRCFailoverAndLoss(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	g.io.CRSF().SetLinkLost(true)
	g.Run(time.Second)
	st := func() string { return string(g.io.Logic().Status().Source) }
	if src := st(); src != "elrs" || !g.state.Armed || g.motorsOff() {
		t.Fatalf("CRSF lost: source %q state %q, want elrs and still balancing", src, g.state.State)
	}
	g.io.ELRS().SetLinkLost(true)
	g.Run(200 * time.Millisecond)
	if !g.motorsOff() || g.state.State != "rc_loss" {
		t.Errorf("both links lost: state %q motors off %v", g.state.State, g.motorsOff())
	}
}

func TestBalanceCANTelemetryAndTuning(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.Run(100 * time.Millisecond)
	g.canRx = nil
	g.Run(time.Second)
	var na, nb int
	for _, f := range g.canRx {
		switch f.ID {
		case canmsg.IDTelemetryA:
			na++
		case canmsg.IDTelemetryB:
			nb++
			b, err := canmsg.ParseTelemetryB(f)
			if err != nil {
				t.Fatal(err)
			}
			if b.BatteryMV < 30000 || b.BatteryMV > 43000 {
				t.Errorf("battery %d mV, want a 10S pack's", b.BatteryMV)
			}
		}
	}
	if na != 10 || nb != 10 {
		t.Errorf("%d 0x400 and %d 0x401 frames in 1 s, want 10 each", na, nb)
	}
	gains := canmsg.PIDGains{Kp: 1.5, Ki: 0.25, Kd: 0.125}
	for _, f := range gains.Frames() {
		_ = g.can.Send(f)
	}
	_ = g.can.Send(canmsg.Config{TiltLimitX100: 2000, MaxSpeedMMPS: 1500}.Frame())
	g.Run(200 * time.Millisecond)
	if s := g.state; s.Kp != 1.5 || s.Ki != 0.25 || s.Kd != 0.125 || s.TiltLimit != 20 || s.MaxSpeed != 1.5 {
		t.Errorf("after 0x301/0x303: %+v", s)
	}
	if r := g.console("status"); !r.OK || !balContains(r.Output, "Kp=1.5") {
		t.Errorf("status: %+v", r)
	}
}

func TestBalanceConsoleCommands(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.Run(100 * time.Millisecond)
	help := g.console("help")
	for _, c := range []string{"status", "pid", "arm", "disarm", "estop", "tilt_limit", "speed_limit", "can_stats", "uart_stats", "reboot"} {
		if !balContains(help.Output, c) {
			t.Errorf("help lacks %s", c)
		}
	}
	for _, c := range []struct {
		line string
		ok   bool
		want string
	}{
		{"pid 1 2", false, "want 3"}, {"pid a 0 0", false, "not a number"}, {"pid -1 0 0", false, "≥ 0"},
		{"tilt_limit 30", false, "at most 25"}, {"tilt_limit 20", true, "20"},
		{"can_stats", true, "tx"}, {"uart_stats", true, "rx frames"}, {"bogus", false, "unknown"},
		{"reboot", true, "disarmed"},
	} {
		r := g.console(c.line)
		if r.OK != c.ok || !balContains(r.Output, c.want) {
			t.Errorf("%s: %+v, want ok %v and %q", c.line, r, c.ok, c.want)
		}
	}
	g.Run(200 * time.Millisecond)
	if g.state.TiltLimit != 25 {
		t.Errorf("tilt limit %v after reboot, want 25", g.state.TiltLimit)
	}
	if r := g.console("uart_stats"); balContains(r.Output, "rx frames 0 ") {
		t.Errorf("no frames from the IO board: %s", r.Output)
	}
}

// balContains reports whether s (a string or a list of strings) contains
// sub.
func balContains[T string | []string](s T, sub string) bool {
	switch v := any(s).(type) {
	case string:
		return strings.Contains(v, sub)
	case []string:
		for _, x := range v {
			if x == sub {
				return true
			}
		}
	}
	return false
}

// BenchmarkBalancingMillisecond runs one simulated millisecond of the
// balancing base armed and balancing: the role's 1 kHz loop with the whole
// robot simulation on the same executor. allocs/op is what the loop and
// the simulation leave to the garbage collector each period.
//
//	go test -run '^$' -bench BalancingMillisecond -benchmem ./roles/balance/
func BenchmarkBalancingMillisecond(b *testing.B) {
	g := newBalanceRig(b, nil)
	if err := g.io.SetChannel(5, 2000); err != nil {
		b.Fatal(err)
	}
	g.Run(50 * time.Millisecond)
	g.io.PressArm(true)
	g.Run(3100 * time.Millisecond)
	if !g.state.Armed {
		b.Fatal("not armed")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Run(time.Millisecond)
	}
}

// The router's cmd_vel drives the armed base while it is fresh, under the
// speed cap; the Orin's CAN command comes first; without either the base
// takes the RC sticks again after can_timeout_ms.
func TestBalanceDrivesFromTheRouter(t *testing.T) {
	g := newBalanceRig(t, nil)
	g.mustArm()
	for _, p := range []string{"speed_limit 20", "speed_limit 30"} {
		if r := g.console(p); !r.OK {
			t.Fatalf("%s: %+v", p, r)
		}
	}
	drive := func(v float64) *executor.Timer {
		return g.Ex.Every(50*time.Millisecond, func() {
			g.Publish(msg.TopicBalanceCmdVel, msg.Twist{Linear: msg.Vector3{X: v}})
		})
	}
	tm := drive(1.0) // asks 1 m/s: the 30 % cap allows 0.6
	x0, _ := g.robot.Balance.Position()
	g.Run(5 * time.Second)
	x1, v := g.robot.Balance.Position()
	if math.Abs(v-0.6) > 0.12 || x1-x0 < 1.5 || g.state.Source != "bus" || math.Abs(g.state.TargetSpeed-0.6) > 1e-9 {
		t.Errorf("driven by the router: speed %.3f m/s, travelled %.2f m, source %q, target %.3f; want 0.6 capped, ≥ 1.5 m, from bus",
			v, x1-x0, g.state.Source, g.state.TargetSpeed)
	}
	// The Orin's 0x300 wins while fresh.
	orin := g.Ex.Every(50*time.Millisecond, func() { _ = g.can.Send(canmsg.Velocity{SpeedMMPS: 0}.Frame()) })
	g.Run(3 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v) > 0.08 || g.state.Source != "can" {
		t.Errorf("with the Orin asking 0: speed %.3f, source %q; want ≈ 0 from can", v, g.state.Source)
	}
	orin.Stop()
	g.Run(time.Second)
	if g.state.Source != "bus" {
		t.Errorf("the Orin silent, the router still driving: source %q, want bus", g.state.Source)
	}
	// The router falls silent: RC (sticks centred) after the timeout.
	tm.Stop()
	g.Run(450 * time.Millisecond)
	if g.state.Source != "bus" {
		t.Errorf("source %q 450 ms after the last cmd_vel, want bus until 500 ms", g.state.Source)
	}
	g.Run(4 * time.Second)
	if _, v := g.robot.Balance.Position(); math.Abs(v) > 0.08 || g.state.Source != "rc" || !g.state.Armed {
		t.Errorf("after the router's timeout: speed %.3f, source %q, armed %v; want standing, from rc, still armed", v, g.state.Source, g.state.Armed)
	}
	// Disarmed, the router's command moves nothing.
	g.console("disarm")
	tm = drive(0.5)
	defer tm.Stop()
	g.Run(time.Second)
	if !g.motorsOff() {
		t.Error("the router's cmd_vel drove a disarmed base")
	}
}

// The router's arm switch: a switch on at power-on arms nothing; switched
// on again it arms after the 3 s hold, only upright; off disarms at once.
func TestBalanceArmSwitch(t *testing.T) {
	g := newBalanceRig(t, nil)
	release := g.hold(0)
	defer release()
	arm := func(on bool) { g.Publish(msg.TopicBalanceArm, msg.BalanceArm{Arm: on}); g.Run(5 * time.Millisecond) }
	arm(true)
	g.Run(4 * time.Second)
	if g.state.Armed || !g.motorsOff() {
		t.Fatal("armed by a switch that was on since power-on")
	}
	arm(false)
	arm(true)
	g.Run(2500 * time.Millisecond)
	if g.state.Armed {
		t.Fatal("armed after a 2.5 s hold, want 3 s")
	}
	g.Run(600 * time.Millisecond)
	if !g.state.Armed || g.motorsOff() {
		t.Fatalf("not armed after a 3.1 s hold: %+v", g.state)
	}
	arm(false)
	if !g.motorsOff() {
		t.Fatal("motors on after the switch went off")
	}
	g.Run(150 * time.Millisecond) // a BalanceState at 10 Hz
	if g.state.Armed {
		t.Fatalf("still armed with the switch off: %+v", g.state)
	}

	// Lying on its bumper: the base's own check refuses.
	release()
	g.robot.Balance.SetPitch(15*balDeg, 0)
	g.Run(500 * time.Millisecond)
	arm(true)
	g.Run(3500 * time.Millisecond)
	if g.state.Armed || !g.motorsOff() || !balContains(g.state.Faults, "arm_refused") {
		t.Errorf("arm switch on a fallen base: %+v, want refused", g.state)
	}
}
