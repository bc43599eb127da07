package mitmotor

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/can"
	drv "github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/hal/executor"
)

// DefaultLoopPeriod is how often the twin evaluates its control law: once
// a millisecond, the simulator's physics step (the real firmware runs it at
// 40 kHz, but the angle it reads changes only once a physics step).
const DefaultLoopPeriod = time.Millisecond

// Options configures an actuator twin.
type Options struct {
	// ID is the actuator's CAN id (1–127 on most firmware).
	ID uint8
	// Model holds the ranges; a zero Model means mini_cheetah's.
	Model drv.Model
	// HostID is where replies go; 0 is the firmware default.
	HostID uint32
	// LoopPeriod: see DefaultLoopPeriod; 0 means it.
	LoopPeriod time.Duration
	// Timeout, when positive, zeroes kp, kd and τ_ff after this long with
	// no command, as the firmware's CAN timeout does.
	Timeout time.Duration
	// Extended makes replies 8 bytes, with temperature and error code, as
	// CubeMars firmware sends them.
	Extended bool
}

// Device is one actuator twin. The zero value is not usable; call New.
type Device struct {
	bus can.Bus
	ex  *executor.Executor
	o   Options

	stopRx func()
	loop   *executor.Timer

	mu        sync.Mutex
	enabled   bool
	connected bool
	cmd       drv.Command
	cmdAt     time.Time
	zero      float64 // physical angle of the actuator's zero, rad
	angle     float64 // physical angle, rad
	velocity  float64 // rad/s
	torque    float64 // applied by the last loop, N·m
	loopP     float64 // position and velocity the last loop used
	loopV     float64
	ignored   int
	commands  int
}

// New joins bus as actuator o.ID and starts its control loop on ex.
func New(bus can.Bus, ex *executor.Executor, o Options) (*Device, error) {
	if o.Model.Name == "" {
		m, err := drv.ModelNamed("mini_cheetah")
		if err != nil {
			return nil, err
		}
		o.Model = m
	}
	if err := o.Model.Validate(); err != nil {
		return nil, err
	}
	if o.HostID == uint32(o.ID) {
		return nil, errors.New("mitmotor twin: the host id must differ from the actuator's")
	}
	if o.LoopPeriod <= 0 {
		o.LoopPeriod = DefaultLoopPeriod
	}
	d := &Device{bus: bus, ex: ex, o: o, connected: true, cmdAt: ex.Now()}
	d.stopRx = bus.Receive(d.receive)
	d.loop = ex.Every(o.LoopPeriod, d.step)
	return d, nil
}

// Close leaves the bus and stops the loop.
func (d *Device) Close() {
	d.stopRx()
	d.loop.Stop()
}

// ID returns the actuator's id.
func (d *Device) ID() uint8 { return d.o.ID }

// Model returns the actuator's ranges.
func (d *Device) Model() drv.Model { return d.o.Model }

// SetState records the output's physical angle (rad) and speed (rad/s).
func (d *Device) SetState(angle, velocity float64) {
	d.mu.Lock()
	d.angle, d.velocity = angle, velocity
	d.mu.Unlock()
}

// Torque returns the torque the actuator applies, N·m.
func (d *Device) Torque() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.torque
}

// LastLoop returns the position (from the zero) and velocity the last
// pass of the control loop used, and the torque it computed.
func (d *Device) LastLoop() (p, v, tau float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loopP, d.loopV, d.torque
}

// Enabled reports whether the actuator is in motor mode.
func (d *Device) Enabled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.enabled
}

// Command returns the command being applied (zero after a timeout) and
// when it arrived.
func (d *Device) Command() (drv.Command, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cmd, d.cmdAt
}

// Position returns the position the actuator reports: the angle from its
// zero, rad.
func (d *Device) Position() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.angle - d.zero
}

// Zero returns the physical angle of the actuator's zero, rad.
func (d *Device) Zero() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.zero
}

// SetConnected takes the actuator off the bus (false) or puts it back.
func (d *Device) SetConnected(c bool) {
	d.mu.Lock()
	d.connected = c
	d.mu.Unlock()
}

// Ignored counts frames addressed to the actuator it could not use.
func (d *Device) Ignored() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ignored
}

// Commands counts the commands the actuator applied.
func (d *Device) Commands() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.commands
}

// Law is the actuator's control law: τ = kp·(p_des − p) + kd·(v_des − v)
// + τ_ff, clamped to the model's torque range. p is measured from the
// actuator's zero.
func Law(m drv.Model, c drv.Command, p, v float64) float64 {
	return m.Torque.Clamp(c.Kp*(c.Position-p) + c.Kd*(c.Velocity-v) + c.Torque)
}

func (d *Device) receive(f can.Frame, at time.Time) {
	if f.Extended || f.Remote || f.ID != uint32(d.o.ID) {
		return
	}
	d.mu.Lock()
	if !d.connected {
		d.mu.Unlock()
		return
	}
	if code, ok := drv.Special(f); ok {
		switch code {
		case drv.SpecialEnable:
			d.enabled = true
		case drv.SpecialDisable:
			d.enabled, d.torque = false, 0
		case drv.SpecialZero:
			d.zero = d.angle
		}
	} else if c, err := d.o.Model.DecodeCommand(f); err == nil {
		if d.enabled {
			d.cmd, d.cmdAt = c, at
			d.commands++
		}
	} else {
		d.ignored++
		d.mu.Unlock()
		return
	}
	r := drv.Reply{ID: d.o.ID, Position: d.angle - d.zero, Velocity: d.velocity, Torque: d.torque, Extended: d.o.Extended, Temperature: 30}
	d.mu.Unlock()
	// A bus in bus-off loses the reply, as the firmware's would.
	_ = d.bus.Send(d.o.Model.ReplyFrame(d.o.HostID, r))
}

// step is one pass of the control loop; it runs on the executor.
func (d *Device) step() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.o.Timeout > 0 && d.ex.Now().Sub(d.cmdAt) >= d.o.Timeout {
		d.cmd.Kp, d.cmd.Kd, d.cmd.Torque = 0, 0, 0
	}
	if !d.enabled {
		d.torque = 0
		return
	}
	d.loopP, d.loopV = d.angle-d.zero, d.velocity
	t := Law(d.o.Model, d.cmd, d.loopP, d.loopV)
	if math.IsNaN(t) {
		t = 0
	}
	d.torque = t
}
