package feetech

import (
	"errors"
	"fmt"
	"math"
)

// Broadcast is the ID every servo listens to.
const Broadcast = 0xFE

// Instructions.
const (
	InstrPing      = 0x01
	InstrRead      = 0x02
	InstrWrite     = 0x03
	InstrRegWrite  = 0x04
	InstrAction    = 0x05
	InstrSyncRead  = 0x82
	InstrSyncWrite = 0x83
)

// Bits of a status packet's error byte.
const (
	ErrVoltage     = 0x01 // input voltage outside the limits
	ErrAngle       = 0x02 // angle sensor fault or goal outside the limits
	ErrOverheat    = 0x04
	ErrOverCurrent = 0x08
	ErrRange       = 0x10 // instruction or parameter out of range
	ErrOverload    = 0x20
)

// Packet is one packet on the bus: an instruction (Instr is the
// instruction) or a status (Instr is the error byte).
type Packet struct {
	ID     uint8
	Instr  uint8
	Params []byte
}

// MaxParams is the most parameters a packet can carry: LEN is one byte and
// counts INSTR and the checksum too.
const MaxParams = 253

// Checksum returns ^(id + len + instr + params) & 0xFF.
func Checksum(id, length, instr uint8, params []byte) uint8 {
	s := uint(id) + uint(length) + uint(instr)
	for _, b := range params {
		s += uint(b)
	}
	return ^uint8(s)
}

// Encode returns the bytes of p. It panics if p has more than MaxParams
// parameters, which is a programming error.
func (p Packet) Encode() []byte {
	return p.AppendTo(nil)
}

// AppendTo appends the bytes of p to b.
func (p Packet) AppendTo(b []byte) []byte {
	if len(p.Params) > MaxParams {
		panic(fmt.Sprintf("feetech: %d parameters exceed %d", len(p.Params), MaxParams))
	}
	n := uint8(len(p.Params) + 2)
	b = append(b, 0xFF, 0xFF, p.ID, n, p.Instr)
	b = append(b, p.Params...)
	return append(b, Checksum(p.ID, n, p.Instr, p.Params))
}

// ErrChecksum reports a packet whose checksum did not match.
var ErrChecksum = errors.New("feetech: checksum mismatch")

// Parser splits a byte stream into packets. It keeps what it has not yet
// consumed between calls to Feed; bytes that cannot start a packet are
// skipped, and a candidate packet with a bad checksum loses its first byte
// so that the search for the next 0xFF 0xFF starts inside it. The zero value
// is ready to use. A Parser is not safe for concurrent use.
type Parser struct {
	buf []byte
	// Dropped counts bytes skipped as garbage; BadChecksums counts candidate
	// packets whose checksum did not match.
	Dropped, BadChecksums int
}

// Feed adds b to the stream and calls fn with each complete, valid packet,
// in order. The packet's Params alias an internal buffer valid only during
// fn.
func (ps *Parser) Feed(b []byte, fn func(Packet)) {
	ps.buf = append(ps.buf, b...)
	i := 0
	for {
		// Find the header.
		for i+1 < len(ps.buf) && !(ps.buf[i] == 0xFF && ps.buf[i+1] == 0xFF) {
			i++
			ps.Dropped++
		}
		if i+4 > len(ps.buf) {
			break
		}
		// A third 0xFF is not an ID (0xFF is no servo's): the header
		// starts one later.
		if ps.buf[i+2] == 0xFF {
			i++
			ps.Dropped++
			continue
		}
		n := int(ps.buf[i+3])
		if n < 2 {
			i++
			ps.Dropped++
			continue
		}
		end := i + 4 + n // index one past the checksum
		if end > len(ps.buf) {
			break
		}
		id, instr := ps.buf[i+2], ps.buf[i+4]
		params := ps.buf[i+5 : end-1]
		if Checksum(id, uint8(n), instr, params) != ps.buf[end-1] {
			ps.BadChecksums++
			i++
			ps.Dropped++
			continue
		}
		fn(Packet{ID: id, Instr: instr, Params: params})
		i = end
	}
	// Keep the unconsumed tail; a lone trailing byte other than 0xFF can
	// never start a header.
	if i == len(ps.buf)-1 && ps.buf[i] != 0xFF {
		i++
		ps.Dropped++
	}
	ps.buf = append(ps.buf[:0], ps.buf[i:]...)
}

// Reset forgets any partial packet.
func (ps *Parser) Reset() { ps.buf = ps.buf[:0] }

// Model is a servo family: its byte order and resolution.
type Model int

const (
	// STS servos (STS3215, STS3032 ...): little-endian, 4096 steps per
	// turn, centre 2048.
	STS Model = iota
	// SCS servos (SCS15, SCS009 ...): big-endian, 1024 steps over about
	// 300°, centre 512.
	SCS
)

func (m Model) String() string {
	if m == SCS {
		return "SCS"
	}
	return "STS"
}

// Put16 stores v in two bytes in the model's byte order.
func (m Model) Put16(b []byte, v uint16) {
	if m == SCS {
		b[0], b[1] = byte(v>>8), byte(v)
		return
	}
	b[0], b[1] = byte(v), byte(v>>8)
}

// Get16 reads two bytes in the model's byte order.
func (m Model) Get16(b []byte) uint16 {
	if m == SCS {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

// StepsPerRadian is the position resolution.
func (m Model) StepsPerRadian() float64 {
	if m == SCS {
		return 1024 / (300 * math.Pi / 180)
	}
	return 4096 / (2 * math.Pi)
}

// Center is the position step of the middle of the range.
func (m Model) Center() int {
	if m == SCS {
		return 512
	}
	return 2048
}

// MaxPosition is the largest position step.
func (m Model) MaxPosition() int {
	if m == SCS {
		return 1023
	}
	return 4095
}

// Radians converts a position in steps to radians from the centre.
func (m Model) Radians(steps int) float64 {
	return float64(steps-m.Center()) / m.StepsPerRadian()
}

// Steps converts radians from the centre to the nearest position step,
// clamped to the range.
func (m Model) Steps(rad float64) int {
	s := int(math.Round(rad*m.StepsPerRadian())) + m.Center()
	return max(0, min(s, m.MaxPosition()))
}

// EncodeSigned returns v in sign-magnitude form with the sign at bit: the
// servos' encoding of speeds (bit 15) and loads (bit 10). The magnitude is
// clamped to the bits below the sign.
func EncodeSigned(v int, bit uint) uint16 {
	limit := 1<<bit - 1
	if v < 0 {
		return uint16(min(-v, limit)) | 1<<bit
	}
	return uint16(min(v, limit))
}

// DecodeSigned reads a sign-magnitude value with the sign at bit; bits above
// the sign are ignored.
func DecodeSigned(v uint16, bit uint) int {
	mag := int(v & (1<<bit - 1))
	if v&(1<<bit) != 0 {
		return -mag
	}
	return mag
}
