package stack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
)

// A cut connection neither sends nor receives, its calls fail, and it
// comes back whole when restored.
func TestCutBus(t *testing.T) {
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	cut := &cutBus{Bus: br.Connect(nil)}
	other := br.Connect(nil)

	var toCut, toOther int
	if _, err := cut.Subscribe("/t/in", bus.QoS{}, ex, func(bus.Msg) { toCut++ }); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Subscribe("/t/out", bus.QoS{}, ex, func(bus.Msg) { toOther++ }); err != nil {
		t.Fatal(err)
	}
	if _, err := cut.Serve("/t/svc", ex, func(_ bus.Msg, reply bus.Reply) { reply("pong", nil) }); err != nil {
		t.Fatal(err)
	}
	exchange := func() (callErr error) {
		_ = other.Publish("/t/in", 1)
		_ = cut.Publish("/t/out", 1)
		other.CallAsync("/t/svc", "ping", 100*time.Millisecond, ex, func(_ bus.Msg, err error) { callErr = err })
		if err := ex.RunFor(context.Background(), 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		return callErr
	}

	if err := exchange(); err != nil || toCut != 1 || toOther != 1 {
		t.Fatalf("connected: call %v, %d in, %d out", err, toCut, toOther)
	}
	cut.setCut(true)
	if err := exchange(); !errors.Is(err, bus.ErrTimeout) || toCut != 1 || toOther != 1 {
		t.Errorf("cut: call %v (want a timeout), %d in, %d out (want 1, 1)", err, toCut, toOther)
	}
	var callErr error
	cut.CallAsync("/t/svc", "ping", time.Second, ex, func(_ bus.Msg, err error) { callErr = err })
	_ = ex.RunFor(context.Background(), time.Millisecond)
	if !errors.Is(callErr, bus.ErrNoResponders) {
		t.Errorf("a call from a cut connection: %v", callErr)
	}
	cut.setCut(false)
	if err := exchange(); err != nil || toCut != 2 || toOther != 2 {
		t.Errorf("restored: call %v, %d in, %d out (want 2, 2)", err, toCut, toOther)
	}
}
