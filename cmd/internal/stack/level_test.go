package stack

import (
	"context"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fixtures"
)

// The balancing base's level calibration is stored on its node: calibrated
// through the console (what saintctl balance calibrate sends), the whole
// robot shut down and brought up again from the same data directory, the
// node loads it — its console reports the same offset and its pitch
// estimate, standing level, reads within 0.2° of the truth once the
// gyroscope's bias is learnt, without calibrating again.
func TestLevelCalibrationSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := fixtures.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	offset := regexp.MustCompile(`level offset (-?[0-9.]+)°`)

	first := startBalance(t, cfg, data, true)
	before := first.console(t, "status")
	if m := offset.FindStringSubmatch(before); m == nil || m[1] != "0.000" {
		t.Fatalf("uncalibrated status %q, want level offset 0.000°", before)
	}
	first.run(t, 3*time.Second)
	if est := first.pitch(t); math.Abs(est) < 1 {
		t.Fatalf("uncalibrated estimate %.2f° at rest: the IMU's offset should show (≥ 1°)", est)
	}
	out := first.console(t, "calibrate")
	m := offset.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("calibrate: %q", out)
	}
	stored, _ := strconv.ParseFloat(m[1], 64)
	first.run(t, 500*time.Millisecond)
	if est := first.pitch(t); math.Abs(est) > 0.2 {
		t.Fatalf("calibrated estimate %.2f°, want within 0.2° of level", est)
	}
	first.stop()

	second := startBalance(t, cfg, data, false)
	second.run(t, 500*time.Millisecond)
	status := second.console(t, "status")
	m = offset.FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("status after the restart: %q", status)
	}
	if got, _ := strconv.ParseFloat(m[1], 64); math.Abs(got-stored) > 1e-3 {
		t.Errorf("after the restart the node's level offset is %g°, calibrated %g°", got, stored)
	}
	// The gyroscope's bias is learnt again after a start (a few °/s, off
	// the estimate by bias × the filter's time constant until it is):
	// give it the 2 s the first run had before calibrating.
	second.run(t, 1500*time.Millisecond)
	if est := second.pitch(t); math.Abs(est) > 0.2 {
		t.Errorf("after the restart the estimate reads %.2f° standing level, want within 0.2°", est)
	}
}

// balanceStack is a whole robot whose balancing base is active, with a
// bus connection watching the base's state.
type balanceStack struct {
	st    *Stack
	b     bus.Bus
	state msg.BalanceState
	seen  bool
	done  bool
}

// startBalance brings the robot up from cfg and data, adopting the
// balancing base when adopt is set (a restarted node keeps its role), and
// runs until the base's node is ACTIVE.
func startBalance(t *testing.T, cfg, data string, adopt bool) *balanceStack {
	t.Helper()
	st, err := New(Options{ConfigDir: cfg, DataDir: data, HTTPAddr: "127.0.0.1:0", WSAddr: "127.0.0.1:0", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.StartHeld(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := &balanceStack{st: st}
	t.Cleanup(s.stop)
	if adopt {
		if err := st.AdoptAll([]string{"balance"}); err != nil {
			t.Fatal(err)
		}
	}
	i, err := st.index("balance")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if st.Nodes[i].State() == msg.StateActive {
			break
		}
		s.run(t, 100*time.Millisecond)
	}
	if st.Nodes[i].State() != msg.StateActive {
		t.Fatalf("the balance node is %s", st.Nodes[i].State())
	}
	s.b = st.Connect()
	if _, err := bus.SubscribeJSON(s.b, "/saint/balance/state", bus.QoS{}, st.Exec, func(_ string, v msg.BalanceState) {
		s.state, s.seen = v, true
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *balanceStack) run(t *testing.T, d time.Duration) {
	t.Helper()
	if err := s.st.Exec.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// pitch is the base's latest pitch estimate, degrees.
func (s *balanceStack) pitch(t *testing.T) float64 {
	t.Helper()
	s.seen = false
	for range 50 {
		if s.seen {
			return s.state.Pitch
		}
		s.run(t, 20*time.Millisecond)
	}
	t.Fatal("no balance state for 1 s")
	return 0
}

// console runs one console line on the base, as saintctl balance does,
// and returns its output.
func (s *balanceStack) console(t *testing.T, line string) string {
	t.Helper()
	var reply *struct {
		Output string `json:"output"`
		OK     bool   `json:"ok"`
	}
	bus.CallAsyncJSON(s.b, "/saint/balance/console", map[string]string{"line": line}, 10*time.Second, s.st.Exec,
		func(r struct {
			Output string `json:"output"`
			OK     bool   `json:"ok"`
		}, err error) {
			if err != nil {
				t.Errorf("console %s: %v", line, err)
			}
			reply = &r
		})
	for range 100 {
		if reply != nil {
			break
		}
		s.run(t, 10*time.Millisecond)
	}
	if reply == nil || !reply.OK {
		t.Fatalf("console %s: %+v", line, reply)
	}
	return reply.Output
}

// stop shuts the robot down, as its processes ending would.
func (s *balanceStack) stop() {
	if s.done {
		return
	}
	s.done = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.st.Exec.Run(ctx) }()
	s.st.Shutdown()
	cancel()
	<-done
}
