package roles_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/roleconfig"
	simboard "github.com/saint-os/saint/sim/board"
)

func TestHeadDrivesServosAndPublishesState(t *testing.T) {
	data, err := os.ReadFile("../fixtures/config/roles/head.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := roleconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.NewVirtual()
	b := mem.New()
	board, _ := simboard.New(&simboard.Options{Profile: simboard.Head, Clock: ex.Clock()})
	var states []msg.HeadState
	if _, err := bus.SubscribeJSON(b, msg.TopicHeadState, bus.QoS{Depth: 100}, ex, func(_ string, s msg.HeadState) { states = append(states, s) }); err != nil {
		t.Fatal(err)
	}
	h, _ := roles.New("head")
	if err := h.Start(roles.Env{NodeID: "n", Exec: ex, Bus: b, Board: board, Config: cfg, Prefix: "/saint/head"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(msg.TopicHeadCmd, msg.HeadCommand{Pan: 90, Tilt: -200, Roll: 10, Speed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	for _, tc := range []struct {
		bcm     int
		pulseUS float64
	}{
		{12, 2000}, // pan 90 of ±180
		{13, 500},  // tilt clamped to -90 of ±90
		{18, 1500 + 10.0/45*1000},
	} {
		freq, duty, on := board.PWMState(tc.bcm)
		if got := duty / freq * 1e6; !on || got < tc.pulseUS-tol*1e6 || got > tc.pulseUS+1e-3 {
			t.Errorf("GPIO%d pulse %.3f µs (on %v), want %.3f", tc.bcm, got, on, tc.pulseUS)
		}
	}
	if n := len(states); n < 19 || n > 21 {
		t.Errorf("%d states in 1 s, want 20 (state_rate_hz 20)", n)
	}
	if last := states[len(states)-1]; last.Pan != 90 || last.Tilt != -90 || last.Roll != 10 {
		t.Errorf("state %+v", last)
	}
	h.Stop()
	if _, _, on := board.PWMState(12); on {
		t.Error("servo PWM still on after Stop")
	}
}
