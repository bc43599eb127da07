package power_test

import (
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/power"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
	simboard "github.com/saint-os/saint/sim/board"
)

// powerRig runs a PowerMonitor on a simulated tracks board whose INA219
// twin the test sets directly: no physics needed.
type powerRig struct {
	ex      *executor.Executor
	bus     *mem.Bus
	board   *simboard.Board
	volts   float64
	amps    float64
	states  []msg.PowerState
	alerts  []msg.ConsoleAlert
	cutoffs []bool
	mon     *power.Monitor
}

func newPowerRig(t *testing.T) *powerRig {
	t.Helper()
	g := &powerRig{ex: executor.NewVirtual(), bus: mem.New(), volts: 27.1, amps: 0.5}
	b, err := simboard.New(&simboard.Options{Profile: simboard.Tracks, Clock: g.ex.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	g.board = b
	g.apply()
	if _, err := bus.SubscribeJSON(g.bus, msg.TopicTracksPower, bus.QoS{Depth: 1000}, g.ex, func(_ string, s msg.PowerState) {
		g.states = append(g.states, s)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(g.bus, msg.NodeAlertTopic("sim-tracks"), bus.QoS{Depth: 100}, g.ex, func(_ string, a msg.ConsoleAlert) {
		g.alerts = append(g.alerts, a)
	}); err != nil {
		t.Fatal(err)
	}
	env := rolekit.Env{NodeID: "sim-tracks", Exec: g.ex, Bus: g.bus, Board: b,
		Config: roletest.Config(t, "tracks"), Prefix: "/saint/tracks"}
	var startErr error
	g.ex.Post(func() {
		g.mon, startErr = power.Start(env, func(c bool) { g.cutoffs = append(g.cutoffs, c) })
	})
	g.run(t, 10*time.Millisecond)
	if startErr != nil {
		t.Fatal(startErr)
	}
	t.Cleanup(func() { g.mon.Stop() })
	return g
}

func (g *powerRig) apply() { g.board.INA219().Set(g.volts, g.amps) }

func (g *powerRig) run(t *testing.T, d time.Duration) {
	t.Helper()
	roletest.Run(t, g.ex, d)
}

// setRestVoltage sets the supply the INA219 measures.
func (g *powerRig) setRestVoltage(v float64) {
	g.volts = v
	g.apply()
}

func (g *powerRig) last() msg.PowerState { return g.states[len(g.states)-1] }

func TestPowerPublishesTheBattery(t *testing.T) {
	t.Parallel()
	g := newPowerRig(t)
	g.run(t, time.Second)
	if n := len(g.states); n < 10 || n > 12 {
		t.Errorf("%d power states in 1 s, want 10 (rate_hz 10) plus the first", n)
	}
	s := g.last()
	if !s.Present || abs(float64(s.Voltage)-27.1) > 0.005 || abs(float64(s.Current)-0.5) > 0.001 ||
		abs(float64(s.Power)-27.1*0.5) > 0.05 || s.Overflow {
		t.Errorf("power %+v, want present at 27.1 V, 0.5 A", s)
	}
	// Beyond 3.2 A (320 mV across 0.1 Ω) the INA219 clips and says so.
	g.amps = 5
	g.apply()
	g.run(t, 200*time.Millisecond)
	if s := g.last(); !s.Overflow || s.Current > 3.3 {
		t.Errorf("at 5 A: %+v, want an overflow at most 3.2 A", s)
	}
	if s.Warning || s.Cutoff || s.WarningVoltage != 25.6 || s.CutoffVoltage != 24.4 {
		t.Errorf("full battery: %+v", s)
	}
	if len(g.alerts) != 0 {
		t.Errorf("alerts on a full battery: %+v", g.alerts)
	}
}

func TestPowerWarningAndCutoffWithHysteresis(t *testing.T) {
	t.Parallel()
	g := newPowerRig(t)
	g.run(t, 500*time.Millisecond)

	// A dip below warning shorter than trip_ms (500 ms) raises nothing.
	g.setRestVoltage(25.3)
	g.run(t, 300*time.Millisecond)
	g.setRestVoltage(27)
	g.run(t, time.Second)
	if g.last().Warning || len(g.alerts) != 0 {
		t.Fatalf("a 300 ms dip tripped the warning: %+v, alerts %+v", g.last(), g.alerts)
	}

	g.setRestVoltage(25.3)
	g.run(t, time.Second)
	if s := g.last(); !s.Warning || s.Cutoff {
		t.Fatalf("at 25.3 V: %+v, want warning without cutoff", s)
	}
	if len(g.alerts) != 1 || g.alerts[0].Level != msg.AlertWarning || g.alerts[0].Source != "sim-tracks" {
		t.Fatalf("alerts %+v, want one warning from sim-tracks", g.alerts)
	}
	if len(g.cutoffs) != 0 {
		t.Fatalf("cutoff callback %v at warning level", g.cutoffs)
	}

	g.setRestVoltage(24.2)
	g.run(t, time.Second)
	if s := g.last(); !s.Cutoff || !s.Warning {
		t.Fatalf("at 24.2 V: %+v, want cutoff", s)
	}
	if len(g.cutoffs) != 1 || !g.cutoffs[0] {
		t.Fatalf("cutoff callback %v, want [true]", g.cutoffs)
	}
	if a := g.alerts[len(g.alerts)-1]; a.Level != msg.AlertCritical || !strings.Contains(a.Message, "cutoff") {
		t.Fatalf("last alert %+v, want a critical cutoff alert", a)
	}

	// Back above cutoff but within the hysteresis: still cut off.
	g.setRestVoltage(24.6)
	g.run(t, 5*time.Second)
	if !g.last().Cutoff || len(g.cutoffs) != 1 {
		t.Fatalf("at 24.6 V (cutoff 24.4 + 0.4 hysteresis): %+v, callbacks %v; want still cut off", g.last(), g.cutoffs)
	}

	// Above cutoff + hysteresis: released after release_ms, warning stays.
	g.setRestVoltage(25.2)
	g.run(t, 1500*time.Millisecond)
	if !g.last().Cutoff {
		t.Fatal("cutoff released before release_ms")
	}
	g.run(t, time.Second)
	if s := g.last(); s.Cutoff || !s.Warning {
		t.Fatalf("at 25.2 V for 2.5 s: %+v, want warning only", s)
	}
	if len(g.cutoffs) != 2 || g.cutoffs[1] {
		t.Fatalf("cutoff callbacks %v, want [true false]", g.cutoffs)
	}

	g.setRestVoltage(27)
	g.run(t, 3*time.Second)
	if s := g.last(); s.Warning || s.Cutoff {
		t.Fatalf("full again: %+v", s)
	}
	if a := g.alerts[len(g.alerts)-1]; a.Level != msg.AlertInfo {
		t.Fatalf("last alert %+v, want the info that the voltage is normal", a)
	}
}

func TestPowerMonitorUnplugged(t *testing.T) {
	t.Parallel()
	g := newPowerRig(t)
	g.run(t, 500*time.Millisecond)
	if err := g.board.SetI2CConnected(0x40, false); err != nil {
		t.Fatal(err)
	}
	g.run(t, time.Second)
	if s := g.last(); s.Present {
		t.Fatalf("unplugged monitor: %+v, want not present", s)
	}
	if len(g.alerts) != 1 || g.alerts[0].Level != msg.AlertWarning {
		t.Fatalf("alerts %+v, want one warning", g.alerts)
	}
	if err := g.board.SetI2CConnected(0x40, true); err != nil {
		t.Fatal(err)
	}
	g.run(t, time.Second)
	if s := g.last(); !s.Present || s.Voltage < 27 {
		t.Fatalf("plugged back: %+v", s)
	}
}

func TestPowerConfigErrorsNameTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, field string }{
		{"power:\n  warning_voltage: 24\n  cutoff_voltage: 25\n", "power.warning_voltage"},
		{"power:\n  warning_voltage: 25\n", "power.cutoff_voltage"},
		{"power:\n  warning_voltage: 25\n  cutoff_voltage: 24\n  volts: 3\n", "volts"},
		{"power:\n  warning_voltage: 25\n  cutoff_voltage: 24\n  rate_hz: -1\n", "power.rate_hz"},
	} {
		cfg, err := roleconfig.Parse([]byte("role: tracks\nversion: \"1\"\ni2c_devices:\n  - {bus: 1, address: 0x40, driver: ina219, purpose: battery}\n" + tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := power.ConfigOf(cfg); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.field)
		}
	}
	cfg, _ := roleconfig.Parse([]byte("role: tracks\nversion: \"1\"\npower:\n  warning_voltage: 25\n  cutoff_voltage: 24\n"))
	if _, err := power.ConfigOf(cfg); err == nil || !strings.Contains(err.Error(), "power.address") {
		t.Errorf("no INA219: error %v, want one naming power.address", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
