package ioboard

import (
	logic "github.com/saint-os/saint/hal/device/ioboard"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// Pins of the IO board's inputs (ESP32-S3 GPIO numbers).
const (
	ArmButtonPin = 9
	KillPin      = 10
)

// Options tune the board; nil means the reference's values.
type Options struct {
	// Logic overrides the IO-board logic's options (timings); its Exec,
	// ports and pins are filled in by New.
	Logic logic.Options
}

// Board is a simulated IO board.
type Board struct {
	ex         *executor.Executor
	logic      *logic.Board
	crsf, elrs *rctx.Serial
	arm, kill  *gpiotest.Pin
}

// New starts an IO board on ex whose inter-board UART is link (the balance
// board's UARTPeer("ttyAMA0")).
func New(ex *executor.Executor, link uart.Port, o *Options) (*Board, error) {
	if o == nil {
		o = &Options{}
	}
	clk := ex.Clock()
	b := &Board{ex: ex, arm: gpiotest.NewPin(ArmButtonPin, clk), kill: gpiotest.NewPin(KillPin, clk)}
	// The kill switch is closed (pulling the sense line low) until opened.
	b.kill.Set(gpio.Low, ex.Now())
	crsfTX, crsfRX := uarttest.Pipe(clk)
	elrsTX, elrsRX := uarttest.Pipe(clk)
	// The lines run for as long as the simulation: keep no record.
	for _, p := range []*uarttest.Port{crsfTX, crsfRX, elrsTX, elrsRX} {
		p.SetRecording(false)
	}
	var err error
	if b.crsf, err = rctx.NewSerial(ex, crsfTX, rc.CRSF, nil); err != nil {
		return nil, err
	}
	if b.elrs, err = rctx.NewSerial(ex, elrsTX, rc.CRSF, &rctx.SerialOptions{CRSFAddress: rc.CRSFAddrTxModule}); err != nil {
		b.crsf.Close()
		return nil, err
	}
	lo := o.Logic
	lo.Exec, lo.CRSF, lo.ELRS, lo.Link, lo.ArmButton, lo.Kill = ex, crsfRX, elrsRX, link, b.arm, b.kill
	if b.logic, err = logic.New(lo); err != nil {
		b.crsf.Close()
		b.elrs.Close()
		return nil, err
	}
	return b, nil
}

// Logic returns the IO-board logic (for its Status, on the executor).
func (b *Board) Logic() *logic.Board { return b.logic }

// CRSF returns the Crossfire transmitter, ELRS the failover one.
func (b *Board) CRSF() *rctx.Serial { return b.crsf }

// ELRS returns the ELRS transmitter.
func (b *Board) ELRS() *rctx.Serial { return b.elrs }

// SetChannel puts channel ch (1-based) at us µs on both transmitters.
func (b *Board) SetChannel(ch int, us uint16) error {
	if err := b.crsf.Set(ch, us); err != nil {
		return err
	}
	return b.elrs.Set(ch, us)
}

// PressArm presses (true) or lets go of (false) the arming button.
func (b *Board) PressArm(pressed bool) {
	if pressed {
		b.arm.Set(gpio.Low, b.ex.Now())
	} else {
		b.arm.Release(b.ex.Now())
	}
}

// SetKill opens (true: kill) or closes the kill switch.
func (b *Board) SetKill(open bool) {
	if open {
		b.kill.Release(b.ex.Now()) // the pull-up takes the line high
	} else {
		b.kill.Set(gpio.Low, b.ex.Now())
	}
}

// Close stops the board and its transmitters. Run it on the executor.
func (b *Board) Close() {
	b.logic.Close()
	b.crsf.Close()
	b.elrs.Close()
}
