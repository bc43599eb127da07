package ioboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/device/ioboard"
	"github.com/saint-os/saint/hal/device/ioboard/link"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// rig is the IO board with two transmitters, its pins, and the balance
// board's end of the link, decoded.
type rig struct {
	t          *testing.T
	ex         *executor.Executor
	b          *ioboard.Board
	crsf, elrs *rctx.Serial
	arm, kill  *gpiotest.Pin
	balance    *uarttest.Port
	rx         []link.Message
	rxAt       []time.Time
	state      *executor.Timer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ex := executor.NewVirtual()
	clk := ex.Clock()
	g := &rig{t: t, ex: ex, arm: gpiotest.NewPin(9, clk), kill: gpiotest.NewPin(10, clk)}
	g.kill.Set(gpio.Low, ex.Now())
	ctx, crx := uarttest.Pipe(clk)
	etx, erx := uarttest.Pipe(clk)
	linkIO, linkBal := uarttest.Pipe(clk)
	g.balance = linkBal
	var err error
	if g.crsf, err = rctx.NewSerial(ex, ctx, rc.CRSF, nil); err != nil {
		t.Fatal(err)
	}
	if g.elrs, err = rctx.NewSerial(ex, etx, rc.CRSF, &rctx.SerialOptions{CRSFAddress: rc.CRSFAddrTxModule}); err != nil {
		t.Fatal(err)
	}
	dec := link.NewDecoder(func(m link.Message) { g.rx, g.rxAt = append(g.rx, m), append(g.rxAt, ex.Now()) })
	linkBal.Receive(func(p []byte, _ time.Time) {
		c := append([]byte(nil), p...)
		ex.Post(func() { dec.Feed(c) })
	})
	g.b, err = ioboard.New(ioboard.Options{Exec: ex, CRSF: crx, ELRS: erx, Link: linkIO, ArmButton: g.arm, Kill: g.kill})
	if err != nil {
		t.Fatal(err)
	}
	g.setState(link.State{})
	return g
}

// setState makes the balance board report s every 20 ms.
func (g *rig) setState(s link.State) {
	if g.state != nil {
		g.state.Stop()
	}
	g.state = g.ex.Every(20*time.Millisecond, func() { _, _ = g.balance.Write(link.Append(nil, s)) })
}

func (g *rig) run(d time.Duration) {
	g.t.Helper()
	if err := g.ex.RunFor(context.Background(), d); err != nil {
		g.t.Fatal(err)
	}
}

func (g *rig) lastRC() link.RCCmd {
	g.t.Helper()
	for i := len(g.rx) - 1; i >= 0; i-- {
		if m, ok := g.rx[i].(link.RCCmd); ok {
			return m
		}
	}
	g.t.Fatal("no RC_CMD received")
	return link.RCCmd{}
}

func (g *rig) faults(since time.Time) uint8 {
	var f uint8
	for i, m := range g.rx {
		if m, ok := m.(link.Fault); ok && !g.rxAt[i].Before(since) {
			f |= m.Flags
		}
	}
	return f
}

func (g *rig) sticks(ch int, us uint16) {
	for _, s := range []*rctx.Serial{g.crsf, g.elrs} {
		if err := s.Set(ch, us); err != nil {
			g.t.Fatal(err)
		}
	}
}

func TestRCCommandEvery10ms(t *testing.T) {
	g := newRig(t)
	g.sticks(2, 2000) // full throttle
	g.sticks(1, 1250) // half left
	g.sticks(7, 2000) // speed limit 100 %
	g.run(200 * time.Millisecond)
	g.rx, g.rxAt = nil, nil
	g.run(100 * time.Millisecond)
	n := 0
	for _, m := range g.rx {
		if _, ok := m.(link.RCCmd); ok {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d RC_CMD in 100 ms, want 10", n)
	}
	if rc := g.lastRC(); rc != (link.RCCmd{Throttle: 1000, Steer: -500}) {
		t.Errorf("RC_CMD %+v, want throttle 1000 steer -500 no flags", rc)
	}
	// The speed-limit channel scales the throttle in 10 % steps.
	g.sticks(7, 1000)
	g.run(50 * time.Millisecond)
	if rc := g.lastRC(); rc.Throttle != 100 {
		t.Errorf("throttle %d at the 10 %% speed limit, want 100", rc.Throttle)
	}
}

func TestFailoverToELRSAfter100ms(t *testing.T) {
	g := newRig(t)
	g.run(200 * time.Millisecond)
	if s := g.b.Status().Source; s != ioboard.SourceCRSF {
		t.Fatalf("source %s, want crsf", s)
	}
	g.crsf.SetLinkLost(true)
	g.run(90 * time.Millisecond)
	if s := g.b.Status().Source; s != ioboard.SourceCRSF {
		t.Errorf("source %s 90 ms after the last CRSF frame, want still crsf", s)
	}
	g.run(30 * time.Millisecond)
	if s := g.b.Status().Source; s != ioboard.SourceELRS {
		t.Errorf("source %s 120 ms after CRSF went quiet, want elrs", s)
	}
	since := g.ex.Now()
	g.elrs.SetLinkLost(true)
	g.run(200 * time.Millisecond)
	st := g.b.Status()
	if st.Source != ioboard.SourceNone || !st.RCLoss || g.faults(since)&link.FaultRCLoss == 0 {
		t.Errorf("both lost: %+v, faults %b: want none, rc_loss sent", st, g.faults(since))
	}
	g.crsf.SetLinkLost(false)
	g.run(50 * time.Millisecond)
	if s := g.b.Status().Source; s != ioboard.SourceCRSF {
		t.Errorf("CRSF back: source %s", s)
	}
}

func TestArmingHold(t *testing.T) {
	g := newRig(t)
	g.sticks(5, 2000)
	g.run(50 * time.Millisecond)
	g.arm.Set(gpio.Low, g.ex.Now())
	g.run(2990 * time.Millisecond)
	if g.lastRC().Flags&link.FlagArmed != 0 {
		t.Fatal("armed before 3 s")
	}
	g.run(30 * time.Millisecond)
	if g.lastRC().Flags&link.FlagArmed == 0 {
		t.Fatal("not armed after a 3 s hold")
	}
	g.arm.Release(g.ex.Now())
	g.run(100 * time.Millisecond)
	if g.lastRC().Flags&link.FlagArmed == 0 {
		t.Fatal("letting go of the button disarmed")
	}
	// The balance board enters a fault: the latch clears.
	g.setState(link.State{ErrorState: 2})
	g.run(50 * time.Millisecond)
	if g.lastRC().Flags&link.FlagArmed != 0 {
		t.Error("still armed after the balance board's fault")
	}
}

func TestArmingRefusedWhenNotUprightOrSwitchOff(t *testing.T) {
	g := newRig(t)
	g.setState(link.State{PitchX100: 1500}) // 15°
	g.sticks(5, 2000)
	g.arm.Set(gpio.Low, g.ex.Now())
	g.run(4 * time.Second)
	if g.lastRC().Flags&link.FlagArmed != 0 {
		t.Error("armed at 15° of lean")
	}
	g.setState(link.State{PitchX100: 200})
	g.sticks(5, 1000) // ARM switch off
	g.run(4 * time.Second)
	if g.lastRC().Flags&link.FlagArmed != 0 {
		t.Error("armed with the ARM switch off")
	}
	g.sticks(5, 2000)
	g.run(3100 * time.Millisecond)
	if g.lastRC().Flags&link.FlagArmed == 0 {
		t.Error("not armed upright with the switch on")
	}
}

func TestKillSwitchAtOnce(t *testing.T) {
	g := newRig(t)
	g.sticks(5, 2000)
	g.arm.Set(gpio.Low, g.ex.Now())
	g.run(3100 * time.Millisecond)
	g.arm.Release(g.ex.Now())
	g.run(5 * time.Millisecond)
	since := g.ex.Now()
	g.kill.Release(since) // the switch opens: the pull-up takes the line high
	g.run(0)
	if g.faults(since)&link.FaultEStop == 0 {
		t.Fatal("no FAULT(estop) on the kill switch edge")
	}
	if rc := g.lastRC(); rc.Flags != link.FlagKill {
		t.Errorf("RC_CMD flags %b, want kill and not armed", rc.Flags)
	}
	// Closed again: the kill clears but arming needs a new hold.
	g.kill.Set(gpio.Low, g.ex.Now())
	g.run(100 * time.Millisecond)
	if rc := g.lastRC(); rc.Flags != 0 {
		t.Errorf("RC_CMD flags %b after the switch closed, want none", rc.Flags)
	}
	// The RC ESTOP channel is a kill too.
	g.sticks(6, 2000)
	g.run(50 * time.Millisecond)
	if rc := g.lastRC(); rc.Flags&link.FlagKill == 0 {
		t.Errorf("RC ESTOP: flags %b, want kill", rc.Flags)
	}
}

func TestLinkGarbageIgnored(t *testing.T) {
	g := newRig(t)
	_, _ = g.balance.Write([]byte{0xAA, 0x05, 0x10, 1, 2, 3, 0xAA, 0xFF, 0x00})
	_, _ = g.balance.Write(link.Append(nil, link.LEDCmd{Pattern: 1, G: 255}))
	g.run(50 * time.Millisecond)
	st := g.b.Status()
	if st.LED != (link.LEDCmd{Pattern: 1, G: 255}) || st.LinkStats.Discarded == 0 {
		t.Errorf("LED %+v stats %+v", st.LED, st.LinkStats)
	}
}
