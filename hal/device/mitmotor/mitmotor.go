package mitmotor

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/can"
)

// Range is the span a field's integer covers: 0 is Min, all ones is Max.
type Range struct {
	Min, Max float64
}

// Encode returns v as a bits-wide unsigned integer over r, as the firmware's
// float_to_uint does (truncating toward Min). v outside r is an error: the
// caller clamps, the driver does not hide a value it cannot send.
func (r Range) Encode(v float64, bits uint) (uint32, error) {
	if math.IsNaN(v) || v < r.Min || v > r.Max {
		return 0, fmt.Errorf("%v outside [%v, %v]", v, r.Min, r.Max)
	}
	full := float64(uint32(1)<<bits - 1)
	return uint32((v - r.Min) * full / (r.Max - r.Min)), nil
}

// Decode returns the value of the bits-wide integer x over r
// (uint_to_float).
func (r Range) Decode(x uint32, bits uint) float64 {
	full := float64(uint32(1)<<bits - 1)
	return float64(x)*(r.Max-r.Min)/full + r.Min
}

// Clamp returns v limited to r.
func (r Range) Clamp(v float64) float64 { return math.Max(r.Min, math.Min(v, r.Max)) }

// Model is an actuator's value ranges: position rad, velocity rad/s, kp
// N·m/rad, kd N·m·s/rad, torque N·m.
type Model struct {
	Name                               string
	Position, Velocity, Kp, Kd, Torque Range
}

// Validate reports a range that is empty or not finite.
func (m Model) Validate() error {
	for _, f := range []struct {
		name string
		r    Range
	}{{"position", m.Position}, {"velocity", m.Velocity}, {"kp", m.Kp}, {"kd", m.Kd}, {"torque", m.Torque}} {
		if !(f.r.Max > f.r.Min) || math.IsInf(f.r.Min, 0) || math.IsInf(f.r.Max, 0) {
			return fmt.Errorf("mitmotor: model %q: %s range [%v, %v] is empty or not finite", m.Name, f.name, f.r.Min, f.r.Max)
		}
	}
	return nil
}

// Models returns the known actuator models, by name.
func Models() []Model {
	out := knownModels()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ModelNamed returns the model called name, or an error listing the known
// ones.
func ModelNamed(name string) (Model, error) {
	var names []string
	for _, m := range Models() {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return Model{}, fmt.Errorf("mitmotor: unknown actuator model %q (known: %v)", name, names)
}

// Command is what the actuator is told: the targets and gains of its
// control law. Units: rad, rad/s, N·m/rad, N·m·s/rad, N·m.
type Command struct {
	Position, Velocity, Kp, Kd, Torque float64
}

// Reply is what an actuator reports.
type Reply struct {
	ID       uint8
	Position float64 // rad
	Velocity float64 // rad/s
	Torque   float64 // N·m (the AK series calls it current)
	// Extended is true when the reply carried the two CubeMars bytes:
	// Temperature (°C) and Error.
	Extended    bool
	Temperature float64
	Error       uint8
}

// ErrNotCommand is returned by DecodeCommand for a frame that is not an
// 8-byte command (a special frame, or the wrong length).
var ErrNotCommand = errors.New("mitmotor: not a command frame")

// EncodeCommand returns the frame telling actuator id to apply c. A value
// outside its range is an error naming the field.
func (m Model) EncodeCommand(id uint8, c Command) (can.Frame, error) {
	var v [5]uint32
	for i, f := range []struct {
		name string
		r    Range
		x    float64
		bits uint
	}{
		{"position", m.Position, c.Position, PositionBits},
		{"velocity", m.Velocity, c.Velocity, VelocityBits},
		{"kp", m.Kp, c.Kp, KpBits},
		{"kd", m.Kd, c.Kd, KdBits},
		{"torque", m.Torque, c.Torque, TorqueBits},
	} {
		x, err := f.r.Encode(f.x, f.bits)
		if err != nil {
			return can.Frame{}, fmt.Errorf("mitmotor: actuator %d (%s): %s %w", id, m.Name, f.name, err)
		}
		v[i] = x
	}
	p, vel, kp, kd, t := v[0], v[1], v[2], v[3], v[4]
	return can.Frame{ID: uint32(id), Length: 8, Data: [8]byte{
		byte(p >> 8), byte(p),
		byte(vel >> 4), byte(vel&0xF)<<4 | byte(kp>>8),
		byte(kp), byte(kd >> 4),
		byte(kd&0xF)<<4 | byte(t>>8), byte(t),
	}}, nil
}

// DecodeCommand returns the command in an 8-byte command frame.
func (m Model) DecodeCommand(f can.Frame) (Command, error) {
	if f.Length != 8 || f.Remote || f.Extended {
		return Command{}, ErrNotCommand
	}
	if _, ok := Special(f); ok {
		return Command{}, ErrNotCommand
	}
	d := f.Data
	p := uint32(d[0])<<8 | uint32(d[1])
	v := uint32(d[2])<<4 | uint32(d[3])>>4
	kp := uint32(d[3]&0xF)<<8 | uint32(d[4])
	kd := uint32(d[5])<<4 | uint32(d[6])>>4
	t := uint32(d[6]&0xF)<<8 | uint32(d[7])
	return Command{
		Position: m.Position.Decode(p, PositionBits),
		Velocity: m.Velocity.Decode(v, VelocityBits),
		Kp:       m.Kp.Decode(kp, KpBits),
		Kd:       m.Kd.Decode(kd, KdBits),
		Torque:   m.Torque.Decode(t, TorqueBits),
	}, nil
}

// SpecialFrame returns the special frame with last byte code (SpecialEnable,
// SpecialDisable, SpecialZero) for actuator id.
func SpecialFrame(id uint8, code byte) can.Frame {
	return can.Frame{ID: uint32(id), Length: 8, Data: [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, code}}
}

// Special reports whether f is a special frame and which.
func Special(f can.Frame) (code byte, ok bool) {
	if f.Length != 8 || f.Remote || f.Extended {
		return 0, false
	}
	for _, b := range f.Data[:7] {
		if b != 0xFF {
			return 0, false
		}
	}
	switch c := f.Data[7]; c {
	case SpecialEnable, SpecialDisable, SpecialZero:
		return c, true
	}
	return 0, false
}

// ReplyFrame returns the frame an actuator sends to host for r: 6 bytes,
// or 8 when r.Extended. Values outside the model's ranges saturate, as the
// firmware's do.
func (m Model) ReplyFrame(host uint32, r Reply) can.Frame {
	enc := func(rg Range, v float64, bits uint) uint32 {
		if math.IsNaN(v) {
			v = 0
		}
		x, _ := rg.Encode(rg.Clamp(v), bits)
		return x
	}
	p := enc(m.Position, r.Position, PositionBits)
	v := enc(m.Velocity, r.Velocity, VelocityBits)
	t := enc(m.Torque, r.Torque, TorqueBits)
	f := can.Frame{ID: host, Length: 6, Data: [8]byte{
		r.ID, byte(p >> 8), byte(p), byte(v >> 4), byte(v&0xF)<<4 | byte(t>>8), byte(t),
	}}
	if r.Extended {
		f.Length = 8
		f.Data[6] = byte(math.Max(0, math.Min(255, math.Round(r.Temperature+TemperatureOffset))))
		f.Data[7] = r.Error
	}
	return f
}

// DecodeReply returns the reply in f, a standard data frame of 6 or more
// bytes (8 with the CubeMars temperature and error bytes).
func (m Model) DecodeReply(f can.Frame) (Reply, error) {
	if f.Extended || f.Remote {
		return Reply{}, errors.New("mitmotor: reply: not a standard data frame")
	}
	if f.Length < 6 || f.Length > 8 {
		return Reply{}, fmt.Errorf("mitmotor: reply: %d bytes, expected 6 or 8", f.Length)
	}
	d := f.Data
	p := uint32(d[1])<<8 | uint32(d[2])
	v := uint32(d[3])<<4 | uint32(d[4])>>4
	t := uint32(d[4]&0xF)<<8 | uint32(d[5])
	r := Reply{
		ID:       d[0],
		Position: m.Position.Decode(p, PositionBits),
		Velocity: m.Velocity.Decode(v, VelocityBits),
		Torque:   m.Torque.Decode(t, TorqueBits),
	}
	if f.Length == 8 {
		r.Extended, r.Temperature, r.Error = true, float64(d[6])-TemperatureOffset, d[7]
	}
	return r, nil
}

// Options configures a Motor. Nil means defaults.
type Options struct {
	// HostID is the CAN id the actuator replies to; 0 is the firmware's
	// default.
	HostID uint32
}

// Motor is one actuator on a CAN bus. Its methods are safe for concurrent
// use; frames are sent on the caller's goroutine.
type Motor struct {
	bus   can.Bus
	id    uint8
	model Model
	host  uint32
	stop  func()

	mu      sync.Mutex
	last    Reply
	at      time.Time
	replies uint64
}

// New returns actuator id of the given model on bus and starts listening
// for its replies; Close stops listening. The model must validate.
func New(bus can.Bus, id uint8, model Model, o *Options) (*Motor, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	if o == nil {
		o = &Options{}
	}
	if o.HostID == uint32(id) {
		return nil, fmt.Errorf("mitmotor: actuator %d: the host id must differ from the actuator's", id)
	}
	m := &Motor{bus: bus, id: id, model: model, host: o.HostID}
	m.stop = bus.Receive(m.receive)
	return m, nil
}

func (m *Motor) receive(f can.Frame, at time.Time) {
	if f.ID != m.host || f.Extended || f.Remote || f.Length < 6 || f.Data[0] != m.id {
		return
	}
	r, err := m.model.DecodeReply(f)
	if err != nil {
		return
	}
	m.mu.Lock()
	m.last, m.at = r, at
	m.replies++
	m.mu.Unlock()
}

// ID returns the actuator's id.
func (m *Motor) ID() uint8 { return m.id }

// Model returns the actuator's model.
func (m *Motor) Model() Model { return m.model }

// Close stops listening for replies.
func (m *Motor) Close() { m.stop() }

// Reply returns the latest reply, when it arrived, and how many replies
// have arrived; a zero time means none yet.
func (m *Motor) Reply() (Reply, time.Time, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.at, m.replies
}

func (m *Motor) send(f can.Frame) error {
	if err := m.bus.Send(f); err != nil {
		return fmt.Errorf("mitmotor: actuator %d: %w", m.id, err)
	}
	return nil
}

// Enable enters motor mode: the actuator starts applying its commands.
func (m *Motor) Enable() error { return m.send(SpecialFrame(m.id, SpecialEnable)) }

// Disable exits motor mode: the actuator applies no torque.
func (m *Motor) Disable() error { return m.send(SpecialFrame(m.id, SpecialDisable)) }

// Zero makes the actuator's present position its zero.
func (m *Motor) Zero() error { return m.send(SpecialFrame(m.id, SpecialZero)) }

// Command sends c; a value outside the model's ranges is an error and
// nothing is sent.
func (m *Motor) Command(c Command) error {
	f, err := m.model.EncodeCommand(m.id, c)
	if err != nil {
		return err
	}
	return m.send(f)
}
