package node

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/clock"
)

func TestAlertHandlerForwardsWarningsRateLimited(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch())
	var got []msg.NodeLog
	h := newAlertHandler(slog.DiscardHandler, "node-7", clk, func(a msg.NodeLog) { got = append(got, a) })
	log := slog.New(h).With("node", "node-7")
	role := log.With("role", "tracks")

	log.Info("booted")
	log.Debug("details")
	role.Warn("battery low", "volts", 24.9)
	role.Error("drive fault", "fault", "left track not responding")
	if len(got) != 2 {
		t.Fatalf("published %+v, want the warning and the error only", got)
	}
	if a := got[0]; a.NodeID != "node-7" || a.Level != msg.NodeLogWarning || a.Source != "tracks" || a.Message != "battery low" ||
		a.Attrs["volts"] != "24.9" || a.Attrs["node"] != "" || a.Timestamp != float64(clock.Epoch().UnixNano())/1e9 {
		t.Errorf("warning %+v", a)
	}
	if a := got[1]; a.Level != msg.NodeLogError || a.Attrs["fault"] != "left track not responding" {
		t.Errorf("error %+v", a)
	}
	log.Warn("adoption refused")
	if a := got[len(got)-1]; a.Source != "node" {
		t.Errorf("the node's own warning has source %q, want node", a.Source)
	}

	// The same message again within AlertRepeat is held back and counted.
	got = nil
	for i := 0; i < 5; i++ {
		clk.Advance(time.Second)
		role.Warn("battery low")
	}
	if len(got) != 0 {
		t.Fatalf("repeats within %v published: %+v", AlertRepeat, got)
	}
	clk.Advance(AlertRepeat)
	role.Warn("battery low")
	if len(got) != 1 || got[0].Suppressed != 5 {
		t.Fatalf("after %v: %+v, want one alert counting the 5 held back", AlertRepeat, got)
	}

	// A storm of different messages: AlertBurst per AlertWindow.
	got = nil
	clk.Advance(AlertRepeat)
	for i := 0; i < 3*AlertBurst; i++ {
		role.Warn(fmt.Sprintf("sensor %d flapping", i))
	}
	if len(got) != AlertBurst {
		t.Fatalf("a storm of %d warnings published %d, want %d", 3*AlertBurst, len(got), AlertBurst)
	}
	clk.Advance(AlertWindow)
	role.Warn("one more")
	if len(got) != AlertBurst+1 {
		t.Errorf("after the window: %d published, want %d", len(got), AlertBurst+1)
	}
}
