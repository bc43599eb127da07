package ioboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/ioboard/link"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/robot"
	simio "github.com/saint-os/saint/sim/twin/ioboard"
)

// The simulated IO board speaks the inter-board protocol on the balance
// board's ttyAMA0: sticks, the kill switch and CRSF loss reach it.
func TestIOBoardOnTheBalanceBoardsUART(t *testing.T) {
	ex := executor.NewVirtual()
	r, err := robot.New(robot.Options{Exec: ex, TruthRate: -1})
	if err != nil {
		t.Fatal(err)
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
	port, err := bb.Hardware().UART("ttyAMA0")
	if err != nil {
		t.Fatal(err)
	}
	var last link.RCCmd
	var faults uint8
	dec := link.NewDecoder(func(m link.Message) {
		switch m := m.(type) {
		case link.RCCmd:
			last = m
		case link.Fault:
			faults |= m.Flags
		}
	})
	stop := port.Receive(func(p []byte, _ time.Time) {
		c := append([]byte(nil), p...)
		ex.Post(func() { dec.Feed(c) })
	})
	defer stop()
	run := func(d time.Duration) {
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	for ch, us := range map[int]uint16{2: 2000, 7: 2000, 1: 1000} {
		if err := io.SetChannel(ch, us); err != nil {
			t.Fatal(err)
		}
	}
	run(100 * time.Millisecond)
	if last != (link.RCCmd{Throttle: 1000, Steer: -1000}) || faults != 0 {
		t.Fatalf("RC_CMD %+v faults %b, want full throttle, full left, no faults", last, faults)
	}
	io.SetKill(true)
	run(20 * time.Millisecond)
	if last.Flags&link.FlagKill == 0 || faults&link.FaultEStop == 0 {
		t.Errorf("kill switch open: RC_CMD %+v faults %b", last, faults)
	}
	io.SetKill(false)
	io.CRSF().SetLinkLost(true)
	run(200 * time.Millisecond)
	if s := io.Logic().Status().Source; s != "elrs" {
		t.Errorf("CRSF lost: source %s, want elrs", s)
	}
	io.Close()
}
