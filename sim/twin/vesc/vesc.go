package vesc

import (
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/executor"
)

// Mode is what the motor is told to do.
type Mode int

const (
	Off     Mode = iota // released: no torque, the motor coasts
	Duty                // Value is the duty cycle, −MaxDuty…MaxDuty
	Current             // Value is the motor current, A
	Brake               // Value is the brake current, A (≥ 0)
	RPM                 // Value is the speed, electrical RPM
	Pos                 // Value is the position, degrees
)

func (m Mode) String() string {
	switch m {
	case Duty:
		return "duty"
	case Current:
		return "current"
	case Brake:
		return "brake"
	case RPM:
		return "rpm"
	case Pos:
		return "pos"
	}
	return "off"
}

// Command is the controller's current command.
type Command struct {
	Mode  Mode
	Value float64
	At    time.Time // when it was received (or timed out)
}

// State is what the motor model reports; it fills the status messages.
type State struct {
	ERPM         float64 // electrical RPM
	MotorCurrent float64 // A
	Duty         float64 // −1…1, the duty the controller applies
	InputCurrent float64 // A, from the supply
	InputVoltage float64 // V
	TempFET      float64 // °C
	TempMotor    float64 // °C
	Tachometer   int32   // commutation steps: 6 per electrical revolution, signed
	PIDPos       float64 // degrees
}

// Options configures a VESC twin. Zero fields take their defaults.
type Options struct {
	// ID is the controller id (0–254).
	ID uint8
	// StatusPeriod is how often the status messages go out; 0 means 20 ms
	// (50 Hz, the firmware's default CAN status rate).
	StatusPeriod time.Duration
	// Timeout releases the motor after this long without a command; 0
	// means 1 s, negative means never.
	Timeout time.Duration
	// TimeoutBrakeCurrent, if positive, brakes with this current after
	// the timeout instead of releasing.
	TimeoutBrakeCurrent float64
	// MaxDuty limits duty commands; 0 means 0.95, the firmware default.
	MaxDuty float64
}

// Device is a VESC twin. The zero value is not usable; call New.
type Device struct {
	bus can.Bus
	ex  *executor.Executor
	o   Options

	stopRx func()
	ticker *executor.Timer

	mu        sync.Mutex
	cmd       Command
	state     State
	timer     *executor.Timer
	connected bool
	ignored   int
}

// New joins bus as controller o.ID and starts broadcasting status on ex.
func New(bus can.Bus, ex *executor.Executor, o Options) *Device {
	if o.StatusPeriod <= 0 {
		o.StatusPeriod = 20 * time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = time.Second
	}
	if o.MaxDuty <= 0 {
		o.MaxDuty = 0.95
	}
	d := &Device{bus: bus, ex: ex, o: o, connected: true, cmd: Command{At: ex.Now()}}
	d.state = State{InputVoltage: 36, TempFET: 25, TempMotor: 25}
	d.stopRx = bus.Receive(d.receive)
	d.ticker = ex.Every(o.StatusPeriod, d.broadcast)
	return d
}

// Close leaves the bus.
func (d *Device) Close() {
	d.stopRx()
	d.ticker.Stop()
	d.mu.Lock()
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
}

// ID returns the controller id.
func (d *Device) ID() uint8 { return d.o.ID }

// Command returns what the motor is told to do.
func (d *Device) Command() Command {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cmd
}

// SetState records what the motor does, for the next status messages.
func (d *Device) SetState(s State) {
	d.mu.Lock()
	d.state = s
	d.mu.Unlock()
}

// State returns what was last set with SetState.
func (d *Device) State() State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state
}

// SetConnected takes the controller off the bus (false) or puts it back.
// Off the bus it sends nothing and hears nothing; its timeout still runs.
func (d *Device) SetConnected(c bool) {
	d.mu.Lock()
	d.connected = c
	d.mu.Unlock()
}

// Ignored returns how many frames addressed to this controller (or to
// every controller) were ignored as malformed or unknown.
func (d *Device) Ignored() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ignored
}

func (d *Device) receive(f can.Frame, at time.Time) {
	if !f.Extended || f.Remote || f.ID>>16 != 0 {
		return
	}
	cmd, id := vesc.SplitID(f.ID)
	if id != d.o.ID && id != vesc.Broadcast {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.connected {
		return
	}
	if f.Length < 4 {
		d.ignored++
		return
	}
	v := float64(int32(binary.BigEndian.Uint32(f.Data[:4])))
	var c Command
	switch cmd {
	case vesc.CmdSetDuty:
		c = Command{Mode: Duty, Value: max(-d.o.MaxDuty, min(v/vesc.DutyScale, d.o.MaxDuty))}
	case vesc.CmdSetCurrent:
		c = Command{Mode: Current, Value: v / vesc.CurrentScale}
		if c.Value == 0 {
			// Zero current releases the motor in the firmware.
			c.Mode = Off
		}
	case vesc.CmdSetCurrentBrake:
		c = Command{Mode: Brake, Value: math.Abs(v / vesc.CurrentScale)}
	case vesc.CmdSetRPM:
		c = Command{Mode: RPM, Value: v}
	case vesc.CmdSetPos:
		c = Command{Mode: Pos, Value: v / vesc.PosScale}
	case vesc.CmdStatus, 14, 15, vesc.CmdStatus4, vesc.CmdStatus5, 58:
		return // STATUS 1–6: what VESCs send, its own among them
	default:
		d.ignored++
		return
	}
	c.At = at
	d.cmd = c
	if d.o.Timeout > 0 {
		if d.timer == nil {
			d.timer = d.ex.After(d.o.Timeout, d.expire)
		} else {
			d.timer.Reset(d.o.Timeout)
		}
	}
}

// expire stops the motor when the timeout passed with no new command; it
// runs on the executor.
func (d *Device) expire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.ex.Now()
	if now.Sub(d.cmd.At) < d.o.Timeout {
		return // a command arrived after the timer was armed
	}
	d.cmd = Command{Mode: Off, At: now}
	if d.o.TimeoutBrakeCurrent > 0 {
		d.cmd = Command{Mode: Brake, Value: d.o.TimeoutBrakeCurrent, At: now}
	}
}

// broadcast sends the status messages; it runs on the executor.
func (d *Device) broadcast() {
	d.mu.Lock()
	s, on := d.state, d.connected
	d.mu.Unlock()
	if !on {
		return
	}
	for _, f := range []can.Frame{
		vesc.Status{ERPM: s.ERPM, Current: s.MotorCurrent, Duty: s.Duty}.Frame(d.o.ID),
		vesc.Status4{TempFET: s.TempFET, TempMotor: s.TempMotor, InputCurrent: s.InputCurrent, PIDPos: s.PIDPos}.Frame(d.o.ID),
		vesc.Status5{Tachometer: s.Tachometer, InputVoltage: s.InputVoltage}.Frame(d.o.ID),
	} {
		// A bus in bus-off loses the frame, as the firmware's would.
		_ = d.bus.Send(f)
	}
}
