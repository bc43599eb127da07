package feetech

import (
	"fmt"
	"sync"
	"time"

	ft "github.com/saint-os/saint/hal/device/feetech"
	"github.com/saint-os/saint/hal/uart"
)

// Options configures a Bus.
type Options struct {
	// Model is the servo family (STS by default).
	Model ft.Model
	// ModelNumber is what RegModelNumber holds; 0 means 777, the STS3215's,
	// on an STS bus (SCS servos keep 0 unless told).
	ModelNumber uint16
}

// Bus is a servo bus twin. The zero value is not usable; call New.
type Bus struct {
	port uart.Port
	o    Options

	mu      sync.Mutex
	servos  []*Servo // in the order added; answers to broadcasts follow id order
	scratch []*Servo // addressed's result, reused
	ps      ft.Parser
	lastRx  time.Time
	stop    func()
	// answers is the buffer the servos' answers are built in, reused:
	// the port copies what it is given before Write returns. A receive
	// that finds it taken (another goroutine's, mid-Write) builds its own.
	answers []byte
}

// FrameGap is the silence after which a servo drops a partial packet, so
// that a corrupt length byte cannot swallow the requests that follow.
const FrameGap = time.Millisecond

// New puts a bus of no servos on port (the device end of the line) and
// starts answering.
func New(port uart.Port, o *Options) *Bus {
	b := &Bus{port: port}
	if o != nil {
		b.o = *o
	}
	if b.o.ModelNumber == 0 && b.o.Model == ft.STS {
		b.o.ModelNumber = 777
	}
	b.stop = port.Receive(b.receive)
	return b
}

// Close stops answering.
func (b *Bus) Close() { b.stop() }

// Model returns the servo family on the bus.
func (b *Bus) Model() ft.Model { return b.o.Model }

// Add connects a servo with id, just powered on: torque off, goal and
// present position at the centre, 7.4 V, 25 °C.
func (b *Bus) Add(id uint8) (*Servo, error) {
	if id >= ft.Broadcast {
		return nil, fmt.Errorf("feetech twin: id %d is not a servo id (0–253)", id)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.servos {
		if s.regs[ft.RegID] == id {
			return nil, fmt.Errorf("feetech twin: id %d already on the bus", id)
		}
	}
	s := &Servo{b: b, connected: true}
	m := b.o.Model
	s.regs[ft.RegFirmwareMajor], s.regs[ft.RegFirmwareMinor] = 3, 6
	m.Put16(s.regs[ft.RegModelNumber:], b.o.ModelNumber)
	s.regs[ft.RegID] = id
	s.regs[ft.RegStatusReturnLevel] = 1
	m.Put16(s.regs[ft.RegMaxAngleLimit:], uint16(m.MaxPosition()))
	s.regs[ft.RegMaxTemperature] = 70
	s.regs[ft.RegMaxVoltage] = 140
	s.regs[ft.RegMinVoltage] = 40
	m.Put16(s.regs[ft.RegMaxTorque:], 1000)
	// At power-on the servo copies its maximum torque (EPROM) into its
	// run-time torque limit (RAM).
	m.Put16(s.regs[RegTorqueLimit:], 1000)
	m.Put16(s.regs[ft.RegGoalPosition:], uint16(m.Center()))
	s.regs[ft.RegLock] = 1
	s.phys = ft.Present{Position: m.Center(), Voltage: 7.4, Temperature: 25}
	copy(s.regs[ft.RegPresentPosition:], m.EncodePresent(s.phys))
	b.servos = append(b.servos, s)
	return s, nil
}

// Servo returns the servo whose id register holds id, or nil.
func (b *Bus) Servo(id uint8) *Servo {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.servos {
		if s.regs[ft.RegID] == id {
			return s
		}
	}
	return nil
}

// Stats returns how many bytes the bus ignored as garbage and how many
// packets failed their checksum.
func (b *Bus) Stats() (dropped, badChecksums int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ps.Dropped, b.ps.BadChecksums
}

func (b *Bus) receive(p []byte, at time.Time) {
	b.mu.Lock()
	out := b.answers[:0]
	b.answers = nil
	if !b.lastRx.IsZero() && at.Sub(b.lastRx) > FrameGap {
		b.ps.Reset()
	}
	b.lastRx = at
	b.ps.Feed(p, func(pk ft.Packet) { out = b.handle(pk, out) })
	b.mu.Unlock()
	if len(out) > 0 {
		_, _ = b.port.Write(out)
	}
	b.mu.Lock()
	b.answers = out
	b.mu.Unlock()
}

// addressed returns the connected servos pk is for, in id order for a
// broadcast; b.mu must be held.
func (b *Bus) addressed(id uint8) []*Servo {
	// A scratch slice, reused: every caller is done with one result
	// before it asks for the next (b.mu is held throughout).
	ss := b.scratch[:0]
	for _, s := range b.servos {
		if s.connected && (id == ft.Broadcast || s.regs[ft.RegID] == id) {
			ss = append(ss, s)
		}
	}
	if id == ft.Broadcast {
		sortByID(ss)
	}
	b.scratch = ss
	return ss
}

func sortByID(ss []*Servo) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].regs[ft.RegID] < ss[j-1].regs[ft.RegID]; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

// handle acts on one instruction packet and appends the answers to out;
// b.mu must be held.
func (b *Bus) handle(pk ft.Packet, out []byte) []byte {
	bcast := pk.ID == ft.Broadcast
	switch pk.Instr {
	case ft.InstrPing:
		if len(pk.Params) != 0 {
			return out
		}
		for _, s := range b.addressed(pk.ID) {
			out = s.status(out, nil)
		}
	case ft.InstrRead:
		if bcast || len(pk.Params) != 2 || pk.Params[1] == 0 || int(pk.Params[0])+int(pk.Params[1]) > len(Servo{}.regs) {
			return out
		}
		addr, n := int(pk.Params[0]), int(pk.Params[1])
		for _, s := range b.addressed(pk.ID) {
			out = s.status(out, s.regs[addr:addr+n])
		}
	case ft.InstrWrite, ft.InstrRegWrite:
		if len(pk.Params) < 2 || int(pk.Params[0])+len(pk.Params)-1 > len(Servo{}.regs) {
			return out
		}
		for _, s := range b.addressed(pk.ID) {
			// The answer carries the id the packet was for, even when the
			// write changes it.
			id := s.regs[ft.RegID]
			if pk.Instr == ft.InstrWrite {
				s.write(pk.Params[0], pk.Params[1:])
			} else {
				s.armed = append(s.armed[:0], pk.Params...)
			}
			if !bcast && s.regs[ft.RegStatusReturnLevel] != 0 {
				out = ft.Packet{ID: id, Instr: s.errBits}.AppendTo(out)
			}
		}
	case ft.InstrAction:
		if len(pk.Params) != 0 {
			return out
		}
		for _, s := range b.addressed(pk.ID) {
			if len(s.armed) > 0 {
				s.write(s.armed[0], s.armed[1:])
				s.armed = s.armed[:0]
			}
			if !bcast && s.regs[ft.RegStatusReturnLevel] != 0 {
				out = s.status(out, nil)
			}
		}
	case ft.InstrSyncWrite:
		if !bcast || len(pk.Params) < 2 || pk.Params[1] == 0 {
			return out
		}
		addr, n := pk.Params[0], int(pk.Params[1])
		blocks := pk.Params[2:]
		if len(blocks)%(n+1) != 0 || int(addr)+n > len(Servo{}.regs) {
			return out
		}
		for i := 0; i < len(blocks); i += n + 1 {
			for _, s := range b.addressed(blocks[i]) {
				s.write(addr, blocks[i+1:i+1+n])
			}
		}
	case ft.InstrSyncRead:
		if b.o.Model != ft.STS || !bcast || len(pk.Params) < 3 || pk.Params[1] == 0 {
			return out
		}
		addr, n := int(pk.Params[0]), int(pk.Params[1])
		if addr+n > len(Servo{}.regs) {
			return out
		}
		for _, id := range pk.Params[2:] {
			if id == ft.Broadcast {
				continue
			}
			for _, s := range b.addressed(id) {
				out = s.status(out, s.regs[addr:addr+n])
			}
		}
	}
	return out
}

// Servo is one servo on a twin bus.
type Servo struct {
	b         *Bus
	regs      [256]byte // guarded by b.mu, as are the fields below
	armed     []byte    // a REG_WRITE: address then data
	connected bool
	errBits   uint8
	writes    int
	// phys is what the model last measured, before the STS position
	// correction.
	phys ft.Present
}

// RegTorqueLimit is the STS run-time torque limit (RAM, 2 bytes, 0.1 % of
// the maximum torque), set from RegMaxTorque at power-on: what a controller
// writes to limit the torque without touching the EPROM.
const RegTorqueLimit = 0x30

// RegOffset is the STS position correction (EPROM, 2 bytes, sign bit 11,
// steps): the servo reports its measured position less the offset and
// drives to its goal plus the offset, so writing the offset moves the
// servo's zero.
const RegOffset = 0x1F

// offset returns the position correction; s.b.mu must be held.
func (s *Servo) offset() int {
	if s.b.o.Model != ft.STS {
		return 0
	}
	return ft.DecodeSigned(s.b.o.Model.Get16(s.regs[RegOffset:]), 11)
}

// report encodes phys, corrected, into the present block; s.b.mu must be
// held.
func (s *Servo) report() {
	p := s.phys
	p.Position -= s.offset()
	s.b.o.Model.PutPresent(s.regs[ft.RegPresentPosition:], p)
}

// status appends a status packet carrying params; s.b.mu must be held.
func (s *Servo) status(out, params []byte) []byte {
	return ft.Packet{ID: s.regs[ft.RegID], Instr: s.errBits, Params: params}.AppendTo(out)
}

// write stores data at addr as the servo's firmware would; s.b.mu must be
// held. The present-value block is the servo's own and ignores writes.
func (s *Servo) write(addr uint8, data []byte) {
	s.writes++
	offsetWritten := false
	for i, v := range data {
		a := int(addr) + i
		if a >= ft.RegPresentPosition {
			continue
		}
		s.regs[a] = v
		offsetWritten = offsetWritten || a == RegOffset || a == RegOffset+1
		if a == ft.RegGoalPosition || a == ft.RegGoalPosition+1 {
			// A position command holds the position.
			s.regs[ft.RegTorqueEnable] = 1
		}
	}
	if offsetWritten {
		s.report()
	}
	if s.regs[ft.RegID] >= ft.Broadcast {
		s.regs[ft.RegID] = ft.Broadcast - 1
	}
}

// ID returns the servo's current id (a WRITE to RegID changes it).
func (s *Servo) ID() uint8 {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.regs[ft.RegID]
}

// Goal is what the controller last asked the servo to do.
type Goal struct {
	Position     int  // steps, clamped to the angle limits, plus the position correction
	Time         int  // ms to reach it; 0 means use Speed
	Speed        int  // steps/s; 0 means the servo's maximum
	Acceleration int  // STS: 100 steps/s² units; 0 means the maximum
	Torque       bool // holding torque enabled
	// TorqueLimit is the torque the servo may give, 0.1 % of its maximum:
	// the lower of the maximum (RegMaxTorque, EPROM) and the run-time
	// limit (RegTorqueLimit, RAM).
	TorqueLimit int
}

// Goal returns the servo's current goal.
func (s *Servo) Goal() Goal {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.goal()
}

// Goals sets goals[i] to the goal of the servo whose id register holds
// ids[i], and found[i] to whether there is one, under one lock: what a
// physics model reads of every servo on the bus every step.
func (b *Bus) Goals(ids []uint8, goals []Goal, found []bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, id := range ids {
		goals[i], found[i] = Goal{}, false
		for _, s := range b.servos {
			if s.regs[ft.RegID] == id {
				goals[i], found[i] = s.goal(), true
				break
			}
		}
	}
}

// goal decodes the servo's goal; s.b.mu must be held.
func (s *Servo) goal() Goal {
	m := s.b.o.Model
	lo, hi := int(m.Get16(s.regs[ft.RegMinAngleLimit:])), int(m.Get16(s.regs[ft.RegMaxAngleLimit:]))
	pos := int(m.Get16(s.regs[ft.RegGoalPosition:]))
	if m == ft.STS {
		pos = ft.DecodeSigned(uint16(pos), 15)
	}
	if hi > lo {
		pos = max(lo, min(pos, hi))
	}
	pos += s.offset()
	return Goal{
		Position:     pos,
		Time:         int(m.Get16(s.regs[ft.RegGoalTime:])),
		Speed:        ft.DecodeSigned(m.Get16(s.regs[ft.RegGoalSpeed:]), 15),
		Acceleration: int(s.regs[ft.RegAcceleration]),
		Torque:       s.regs[ft.RegTorqueEnable] != 0,
		TorqueLimit:  int(min(m.Get16(s.regs[ft.RegMaxTorque:]), m.Get16(s.regs[RegTorqueLimit:]))),
	}
}

// Writes returns how many writes (WRITE, ACTION, SYNC_WRITE share) the
// servo has applied, so a model can tell a fresh goal from an old one.
func (s *Servo) Writes() int {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.writes
}

// SetPresent stores what the servo measures; p.At is ignored. The
// servo reports the position less its correction (RegOffset).
func (s *Servo) SetPresent(p ft.Present) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.phys = p
	s.report()
}

// Present returns what the servo currently reports.
func (s *Servo) Present() ft.Present {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	p, _ := s.b.o.Model.DecodePresent(s.regs[ft.RegPresentPosition:])
	return p
}

// Register returns the byte at addr of the control table.
func (s *Servo) Register(addr uint8) byte {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.regs[addr]
}

// SetConnected unplugs (false) or plugs back (true) the servo: unplugged,
// it answers nothing and ignores writes.
func (s *Servo) SetConnected(c bool) {
	s.b.mu.Lock()
	s.connected = c
	s.b.mu.Unlock()
}

// SetError sets the error byte the servo's status packets carry
// (ft.ErrOverheat | ft.ErrOverload ...); 0 clears it.
func (s *Servo) SetError(bits uint8) {
	s.b.mu.Lock()
	s.errBits = bits
	s.b.mu.Unlock()
}
