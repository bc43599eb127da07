package stack

import (
	"fmt"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
	rcin "github.com/saint-os/saint/server/inputs/rc"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// rcLink is the simulated RC transmitter and its SBUS receiver (the rctx
// twin) wired by a simulated UART to the server's own RC receiver
// (server/inputs/rc), which decodes, normalises and hands the sticks to
// the router as on the robot.
type rcLink struct {
	tx     *rctx.Serial
	device *uarttest.Port
}

// newRCLink makes the line and returns the receiver's end of it for the
// server (server.Options.RCPorts); the transmitter is made at start (it
// runs on the executor).
func newRCLink(ex *executor.Executor) (*rcLink, rcin.PortOpener) {
	device, host := uarttest.Pipe(ex.Clock())
	// The line runs for as long as the simulation: keep no record.
	device.SetRecording(false)
	host.SetRecording(false)
	return &rcLink{device: device}, rcin.FixedPort(host)
}

// start switches the receiver on. The transmitter starts switched off (no
// frames) so that it takes nothing over from the other sources until
// someone picks it up; its switches start in their safe-to-drive
// positions (the emergency switch, channel 6, high).
func (l *rcLink) start(ex *executor.Executor) error {
	tx, err := rctx.NewSerial(ex, l.device, rc.SBUS, nil)
	if err != nil {
		return err
	}
	if err := tx.SetSwitch(6, true); err != nil {
		return err
	}
	tx.SetLinkLost(true)
	l.tx = tx
	return nil
}

func (l *rcLink) close() {
	if l.tx != nil {
		l.tx.Close()
	}
}

// RC is the simulated transmitter: stick and switch positions and its link.
type RC struct{ l *rcLink }

// SetPower switches the transmitter on (frames flow) or off (the link is
// lost; the receiver sends SBUS frame-lost and then failsafe frames).
func (c RC) SetPower(on bool) { c.l.tx.SetLinkLost(!on) }

// SetNormalized moves channel ch (1-based) to v in -1…1.
func (c RC) SetNormalized(ch int, v float64) error {
	if err := c.l.tx.SetNormalized(ch, v); err != nil {
		return fmt.Errorf("rc channel %d: %w", ch, err)
	}
	return nil
}

// SetSwitch flips a two-position switch on channel ch.
func (c RC) SetSwitch(ch int, on bool) error {
	if err := c.l.tx.SetSwitch(ch, on); err != nil {
		return fmt.Errorf("rc channel %d: %w", ch, err)
	}
	return nil
}
