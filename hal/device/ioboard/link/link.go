package link

import (
	"encoding/binary"
	"fmt"
)

// Start is the first byte of every frame.
const Start = 0xAA

// MaxPayload is the longest payload the decoder accepts. The tabled
// messages are at most 5 bytes; a longer LEN is taken for garbage.
const MaxPayload = 32

// Message types.
const (
	TypeRCCmd  = 0x01 // IO → BALANCE
	TypeSensor = 0x02 // IO → BALANCE
	TypeFault  = 0x03 // IO → BALANCE
	TypeState  = 0x10 // BALANCE → IO
	TypeLEDCmd = 0x11 // BALANCE → IO
	TypeBuzzer = 0x12 // BALANCE → IO
)

// RC_CMD flags.
const (
	FlagArmed = 1 << 0
	FlagKill  = 1 << 1
)

// FAULT flags.
const (
	FaultRCLoss     = 1 << 0
	FaultMotorFault = 1 << 1
	FaultEStop      = 1 << 2
)

// StickFull is the RC_CMD value of a stick at full travel: throttle and
// steer are per mille of travel, −1000…1000.
const StickFull = 1000

// Message is one of the tabled messages.
type Message interface {
	// Type returns the TYPE byte.
	Type() byte
	// AppendPayload appends the payload bytes.
	AppendPayload(dst []byte) []byte
}

// RCCmd (0x01) carries the sticks and the arming state: int16 throttle,
// int16 steer (per mille, ±StickFull), uint8 flags (FlagArmed, FlagKill).
type RCCmd struct {
	Throttle int16
	Steer    int16
	Flags    uint8
}

// Sensor (0x02) carries the IO board's sensors: uint16 ToF distance (mm),
// int16 barometric pressure change (Pa), uint8 NFC tag present.
type Sensor struct {
	ToFmm       uint16
	BaroDeltaPa int16
	NFCPresent  uint8
}

// Fault (0x03) reports faults: FaultRCLoss, FaultMotorFault, FaultEStop.
type Fault struct{ Flags uint8 }

// State (0x10) is the balance board's state: int16 pitch in 0.01°, int16
// PID output (motor current in 0.01 A), uint8 error state.
type State struct {
	PitchX100  int16
	PIDOut     int16
	ErrorState uint8
}

// LEDCmd (0x11) sets the LED pattern and colour.
type LEDCmd struct{ Pattern, R, G, B uint8 }

// Buzzer (0x12) sounds a tone for a duration.
type Buzzer struct {
	ToneID     uint8
	DurationMs uint16
}

// Type implements Message.
func (RCCmd) Type() byte { return TypeRCCmd }

// Type implements Message.
func (Sensor) Type() byte { return TypeSensor }

// Type implements Message.
func (Fault) Type() byte { return TypeFault }

// Type implements Message.
func (State) Type() byte { return TypeState }

// Type implements Message.
func (LEDCmd) Type() byte { return TypeLEDCmd }

// Type implements Message.
func (Buzzer) Type() byte { return TypeBuzzer }

var le = binary.LittleEndian

// AppendPayload implements Message.
func (m RCCmd) AppendPayload(b []byte) []byte {
	b = le.AppendUint16(b, uint16(m.Throttle))
	b = le.AppendUint16(b, uint16(m.Steer))
	return append(b, m.Flags)
}

// AppendPayload implements Message.
func (m Sensor) AppendPayload(b []byte) []byte {
	b = le.AppendUint16(b, m.ToFmm)
	b = le.AppendUint16(b, uint16(m.BaroDeltaPa))
	return append(b, m.NFCPresent)
}

// AppendPayload implements Message.
func (m Fault) AppendPayload(b []byte) []byte { return append(b, m.Flags) }

// AppendPayload implements Message.
func (m State) AppendPayload(b []byte) []byte {
	b = le.AppendUint16(b, uint16(m.PitchX100))
	b = le.AppendUint16(b, uint16(m.PIDOut))
	return append(b, m.ErrorState)
}

// AppendPayload implements Message.
func (m LEDCmd) AppendPayload(b []byte) []byte { return append(b, m.Pattern, m.R, m.G, m.B) }

// AppendPayload implements Message.
func (m Buzzer) AppendPayload(b []byte) []byte {
	return le.AppendUint16(append(b, m.ToneID), m.DurationMs)
}

// PayloadLen returns the payload length of a tabled type, and false for a
// type the table does not have.
func PayloadLen(typ byte) (int, bool) {
	switch typ {
	case TypeRCCmd, TypeSensor, TypeState:
		return 5, true
	case TypeFault:
		return 1, true
	case TypeLEDCmd:
		return 4, true
	case TypeBuzzer:
		return 3, true
	}
	return 0, false
}

// Append appends m's frame to dst.
func Append(dst []byte, m Message) []byte {
	start := len(dst)
	dst = append(dst, Start, 0, m.Type())
	dst = m.AppendPayload(dst)
	dst[start+1] = byte(len(dst) - start - 3)
	return append(dst, CRC8Maxim(dst[start+2:]))
}

// Parse decodes the payload of a message of type typ.
func Parse(typ byte, p []byte) (Message, error) {
	n, ok := PayloadLen(typ)
	if !ok {
		return nil, fmt.Errorf("link: type 0x%02x: not a tabled message type", typ)
	}
	if len(p) != n {
		return nil, fmt.Errorf("link: type 0x%02x: payload is %d bytes, want %d", typ, len(p), n)
	}
	switch typ {
	case TypeRCCmd:
		return RCCmd{Throttle: int16(le.Uint16(p)), Steer: int16(le.Uint16(p[2:])), Flags: p[4]}, nil
	case TypeSensor:
		return Sensor{ToFmm: le.Uint16(p), BaroDeltaPa: int16(le.Uint16(p[2:])), NFCPresent: p[4]}, nil
	case TypeFault:
		return Fault{Flags: p[0]}, nil
	case TypeState:
		return State{PitchX100: int16(le.Uint16(p)), PIDOut: int16(le.Uint16(p[2:])), ErrorState: p[4]}, nil
	case TypeLEDCmd:
		return LEDCmd{Pattern: p[0], R: p[1], G: p[2], B: p[3]}, nil
	default: // TypeBuzzer
		return Buzzer{ToneID: p[0], DurationMs: le.Uint16(p[1:])}, nil
	}
}

// CRC8Maxim is CRC-8/MAXIM (Dallas/Maxim 1-Wire): poly 0x31 reflected
// (0x8C), init 0, no final xor. check("123456789") = 0xA1.
func CRC8Maxim(b []byte) byte {
	var crc byte
	for _, x := range b {
		crc ^= x
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x8C
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// Stats counts what a Decoder saw.
type Stats struct {
	Frames     uint64 // good frames of tabled types
	CRCErrors  uint64 // frames whose checksum did not match
	BadLength  uint64 // a LEN over MaxPayload, or not the tabled length
	Unknown    uint64 // good checksum, type not in the table
	Discarded  uint64 // bytes skipped while looking for a frame
	BytesTotal uint64
}

// Decoder is a streaming frame decoder. It is not safe for concurrent use.
type Decoder struct {
	buf     []byte
	stats   Stats
	onFrame func(Message)
}

// NewDecoder returns a decoder calling onFrame for every good frame.
func NewDecoder(onFrame func(Message)) *Decoder {
	return &Decoder{onFrame: onFrame, buf: make([]byte, 0, 64)}
}

// Stats returns the counters.
func (d *Decoder) Stats() Stats { return d.stats }

// Feed hands the decoder the next bytes from the line.
func (d *Decoder) Feed(p []byte) {
	d.stats.BytesTotal += uint64(len(p))
	d.buf = append(d.buf, p...)
	for {
		i := 0
		for i < len(d.buf) && d.buf[i] != Start {
			i++
		}
		d.stats.Discarded += uint64(i)
		d.buf = d.buf[i:]
		if len(d.buf) < 2 {
			break
		}
		n := int(d.buf[1])
		if n > MaxPayload {
			d.skip()
			d.stats.BadLength++
			continue
		}
		if len(d.buf) < n+4 {
			break
		}
		frame := d.buf[:n+4]
		if CRC8Maxim(frame[2:n+3]) != frame[n+3] {
			d.skip()
			d.stats.CRCErrors++
			continue
		}
		typ := frame[2]
		want, known := PayloadLen(typ)
		switch {
		case !known:
			d.stats.Unknown++
		case want != n:
			d.stats.BadLength++
		default:
			m, _ := Parse(typ, frame[3:n+3])
			d.stats.Frames++
			d.onFrame(m)
		}
		d.buf = d.buf[n+4:]
	}
	// Keep the buffer from creeping along its backing array.
	if cap(d.buf) > 256 && len(d.buf) < 64 {
		d.buf = append(make([]byte, 0, 64), d.buf...)
	}
}

// skip drops a start byte that did not begin a good frame.
func (d *Decoder) skip() {
	d.buf = d.buf[1:]
	d.stats.Discarded++
}
