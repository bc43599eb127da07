package vesc

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/can"
)

// Broadcast is the controller id every VESC obeys.
const Broadcast = 255

// FrameID returns the 29-bit id of command cmd to or from controller id.
func FrameID(cmd, id uint8) uint32 { return uint32(cmd)<<8 | uint32(id) }

// SplitID returns the command and controller id of an extended frame id.
func SplitID(frameID uint32) (cmd, id uint8) {
	return uint8(frameID >> 8), uint8(frameID)
}

// CommandFrame returns the frame carrying command cmd with raw value v to
// controller id.
func CommandFrame(cmd, id uint8, v int32) can.Frame {
	f := can.Frame{ID: FrameID(cmd, id), Extended: true, Length: 4}
	binary.BigEndian.PutUint32(f.Data[:4], uint32(v))
	return f
}

// scaled converts v × scale to an int32, rejecting what does not fit.
func scaled(field string, v, scale, limit float64) (int32, error) {
	if math.IsNaN(v) || math.Abs(v) > limit {
		return 0, fmt.Errorf("vesc: %s %v outside ±%v", field, v, limit)
	}
	r := math.Round(v * scale)
	if r > math.MaxInt32 || r < math.MinInt32 {
		return 0, fmt.Errorf("vesc: %s %v does not fit the frame", field, v)
	}
	return int32(r), nil
}

// Status is the STATUS message: speed, motor current and duty.
type Status struct {
	ERPM    float64 // electrical RPM
	Current float64 // motor current, A
	Duty    float64 // −1…1
	At      time.Time
}

// Status4 is the STATUS_4 message: temperatures, input current and the
// position controller's angle.
type Status4 struct {
	TempFET      float64 // °C
	TempMotor    float64 // °C
	InputCurrent float64 // A, from the supply
	PIDPos       float64 // degrees
	At           time.Time
}

// Status5 is the STATUS_5 message: tachometer and input voltage.
type Status5 struct {
	Tachometer   int32   // steps counted by the commutation, signed
	InputVoltage float64 // V
	At           time.Time
}

// Telemetry is the latest of each status message from one controller. A
// message never received has a zero At.
type Telemetry struct {
	ID      uint8
	Status  Status
	Status4 Status4
	Status5 Status5
}

func i16(b []byte) float64 { return float64(int16(binary.BigEndian.Uint16(b))) }

// put16 stores round(v × scale) as a saturated int16.
func put16(b []byte, v, scale float64) {
	r := math.Round(v * scale)
	if math.IsNaN(r) {
		r = 0
	}
	binary.BigEndian.PutUint16(b, uint16(int16(max(math.MinInt16, min(r, math.MaxInt16)))))
}

// Update applies f to t if it is a status message from controller t.ID,
// received at at, and reports whether it was one. Frames that are standard,
// remote, too short or from another controller are not.
func (t *Telemetry) Update(f can.Frame, at time.Time) bool {
	if !f.Extended || f.Remote || f.ID>>16 != 0 {
		return false
	}
	cmd, id := SplitID(f.ID)
	if id != t.ID || f.Length != 8 {
		return false
	}
	d := f.Data[:]
	switch cmd {
	case CmdStatus:
		t.Status = Status{
			ERPM:    float64(int32(binary.BigEndian.Uint32(d))),
			Current: i16(d[4:]) / 10,
			Duty:    i16(d[6:]) / 1000,
			At:      at,
		}
	case CmdStatus4:
		t.Status4 = Status4{
			TempFET:      i16(d[0:]) / 10,
			TempMotor:    i16(d[2:]) / 10,
			InputCurrent: i16(d[4:]) / 10,
			PIDPos:       i16(d[6:]) / 50,
			At:           at,
		}
	case CmdStatus5:
		t.Status5 = Status5{
			Tachometer:   int32(binary.BigEndian.Uint32(d)),
			InputVoltage: i16(d[4:]) / 10,
			At:           at,
		}
	default:
		return false
	}
	return true
}

// Frame returns the STATUS frame controller id sends for s.
func (s Status) Frame(id uint8) can.Frame {
	f := can.Frame{ID: FrameID(CmdStatus, id), Extended: true, Length: 8}
	e := math.Round(s.ERPM)
	binary.BigEndian.PutUint32(f.Data[:], uint32(int32(max(math.MinInt32, min(e, math.MaxInt32)))))
	put16(f.Data[4:], s.Current, 10)
	put16(f.Data[6:], s.Duty, 1000)
	return f
}

// Frame returns the STATUS_4 frame controller id sends for s.
func (s Status4) Frame(id uint8) can.Frame {
	f := can.Frame{ID: FrameID(CmdStatus4, id), Extended: true, Length: 8}
	put16(f.Data[0:], s.TempFET, 10)
	put16(f.Data[2:], s.TempMotor, 10)
	put16(f.Data[4:], s.InputCurrent, 10)
	put16(f.Data[6:], s.PIDPos, 50)
	return f
}

// Frame returns the STATUS_5 frame controller id sends for s.
func (s Status5) Frame(id uint8) can.Frame {
	f := can.Frame{ID: FrameID(CmdStatus5, id), Extended: true, Length: 8}
	binary.BigEndian.PutUint32(f.Data[:], uint32(s.Tachometer))
	put16(f.Data[4:], s.InputVoltage, 10)
	return f
}

// Controller is one VESC on a CAN bus. Its methods are safe for concurrent
// use; commands are sent on the caller's goroutine.
type Controller struct {
	bus  can.Bus
	id   uint8
	stop func()

	mu  sync.Mutex
	tel Telemetry
}

// New returns the VESC with controller id on bus and starts listening for
// its status messages; Close stops listening.
func New(bus can.Bus, id uint8) *Controller {
	c := &Controller{bus: bus, id: id, tel: Telemetry{ID: id}}
	c.stop = bus.Receive(func(f can.Frame, at time.Time) {
		c.mu.Lock()
		c.tel.Update(f, at)
		c.mu.Unlock()
	})
	return c
}

// ID returns the controller id.
func (c *Controller) ID() uint8 { return c.id }

// Close stops listening for status messages.
func (c *Controller) Close() { c.stop() }

// Telemetry returns the latest status messages.
func (c *Controller) Telemetry() Telemetry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tel
}

func (c *Controller) send(cmd uint8, field string, v, scale, limit float64) error {
	raw, err := scaled(field, v, scale, limit)
	if err != nil {
		return fmt.Errorf("%w (VESC %d)", err, c.id)
	}
	if err := c.bus.Send(CommandFrame(cmd, c.id, raw)); err != nil {
		return fmt.Errorf("vesc: VESC %d: %w", c.id, err)
	}
	return nil
}

// SetDuty sets the duty cycle, −1…1 (the VESC limits it further to its
// configured maximum duty).
func (c *Controller) SetDuty(duty float64) error {
	return c.send(CmdSetDuty, "duty", duty, DutyScale, 1)
}

// SetCurrent sets the motor current in A; negative drives backwards, 0
// releases the motor.
func (c *Controller) SetCurrent(amps float64) error {
	return c.send(CmdSetCurrent, "current", amps, CurrentScale, math.MaxInt32/CurrentScale)
}

// SetCurrentBrake brakes with the given current in A (its sign is ignored
// by the VESC).
func (c *Controller) SetCurrentBrake(amps float64) error {
	return c.send(CmdSetCurrentBrake, "brake current", amps, CurrentScale, math.MaxInt32/CurrentScale)
}

// SetRPM sets the speed in electrical RPM (mechanical RPM × pole pairs).
func (c *Controller) SetRPM(erpm float64) error {
	return c.send(CmdSetRPM, "erpm", erpm, 1, math.MaxInt32)
}

// SetPos sets the position controller's target, degrees 0–360.
func (c *Controller) SetPos(deg float64) error {
	return c.send(CmdSetPos, "position", deg, PosScale, math.MaxInt32/PosScale)
}
