package joystick

import (
	"encoding/binary"
	"fmt"
)

// js_event types.
const (
	TypeButton = 0x01
	TypeAxis   = 0x02
	TypeInit   = 0x80 // ORed in for the initial state reported at open
)

// EventSize is the size of a js_event.
const EventSize = 8

// Event is one js_event.
type Event struct {
	TimeMs uint32 // event timestamp in milliseconds
	Value  int16  // axis position −32767..32767, or button 0/1
	Type   uint8  // TypeButton or TypeAxis, with TypeInit for initial state
	Number uint8  // axis or button number
}

// Init reports whether e is a synthetic initial-state event.
func (e Event) Init() bool { return e.Type&TypeInit != 0 }

// Kind is e's type without TypeInit: TypeButton, TypeAxis or something
// this package ignores.
func (e Event) Kind() uint8 { return e.Type &^ TypeInit }

// ParseEvent decodes one js_event (little-endian, the byte order of the
// machines SAINT.OS runs on).
func ParseEvent(b []byte) (Event, error) {
	if len(b) != EventSize {
		return Event{}, fmt.Errorf("joystick: js_event is %d bytes, want %d", len(b), EventSize)
	}
	return Event{
		TimeMs: binary.LittleEndian.Uint32(b[0:4]),
		Value:  int16(binary.LittleEndian.Uint16(b[4:6])),
		Type:   b[6],
		Number: b[7],
	}, nil
}

// AppendEvent appends e as a js_event to dst.
func AppendEvent(dst []byte, e Event) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, e.TimeMs)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(e.Value))
	return append(dst, e.Type, e.Number)
}

// Decoder splits a byte stream into events. A joystick device returns
// whole events from every read, but a pipe or FIFO may not: a partial
// event waits for the rest.
type Decoder struct {
	buf [EventSize]byte
	n   int
}

// Feed appends the events completed by p to dst and returns it.
func (d *Decoder) Feed(dst []Event, p []byte) []Event {
	for len(p) > 0 {
		c := copy(d.buf[d.n:], p)
		d.n += c
		p = p[c:]
		if d.n == EventSize {
			e, _ := ParseEvent(d.buf[:]) // EventSize bytes always parse
			dst = append(dst, e)
			d.n = 0
		}
	}
	return dst
}

// Normalize maps an axis value to −1..1 as the joystick drivers do:
// value/32767, with −32768 clamped to −1.
func Normalize(v int16) float64 {
	if v <= -32767 {
		return -1
	}
	return float64(v) / 32767
}
