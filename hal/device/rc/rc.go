package rc

import (
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/uart"
)

// Protocol names an RC receiver protocol as config/rc_receiver.yaml spells
// it.
type Protocol string

// Protocols.
const (
	PWM  Protocol = "pwm"
	PPM  Protocol = "ppm"
	SBUS Protocol = "sbus"
	IBUS Protocol = "ibus"
	CRSF Protocol = "crsf"
)

// Protocols returns every protocol, serial ones last.
func Protocols() []Protocol { return []Protocol{PWM, PPM, SBUS, IBUS, CRSF} }

// Serial reports whether p is carried on a UART (SBUS, IBUS, CRSF) rather
// than on GPIO edges.
func (p Protocol) Serial() bool { return p == SBUS || p == IBUS || p == CRSF }

// MaxChannels is the most proportional channels any protocol here carries
// (SBUS and CRSF: 16).
const MaxChannels = 16

// Frame is one decoded frame, whatever the protocol.
type Frame struct {
	Protocol Protocol
	// Time is when the byte or edge that completed the frame arrived.
	Time time.Time
	// Interval is the time since the decoder's previous good frame, 0 for
	// the first: 1/Interval is the frame rate.
	Interval time.Duration
	// Count is how many channels the frame carries; Micros and Raw hold
	// them from index 0 (channel 1).
	Count int
	// Micros are the channels as servo pulse widths in µs (1000–2000
	// nominal, 1500 centre). A PWM channel with no recent pulse is 0.
	Micros [MaxChannels]uint16
	// Raw are the values as the protocol carries them: 11-bit (0–2047) for
	// SBUS and CRSF, µs for IBUS, PPM and PWM.
	Raw [MaxChannels]uint16
	// Ch17 and Ch18 are SBUS's two digital channels.
	Ch17, Ch18 bool
	// FrameLost and Failsafe are SBUS's flags: the receiver missed this
	// frame from the transmitter, and it has given up on the link and is
	// sending its failsafe positions.
	FrameLost, Failsafe bool
	// HasLink reports whether Link holds CRSF link statistics, received at
	// LinkTime (the most recent before this frame).
	HasLink  bool
	Link     LinkStats
	LinkTime time.Time
}

// Channels returns the channels' pulse widths in µs, channel 1 first. The
// slice aliases f.
func (f *Frame) Channels() []uint16 { return f.Micros[:f.Count] }

// Stats counts what a decoder saw. Bad frames and discarded bytes are what
// noise on the line looks like; a steady rise means a wiring or baud problem.
type Stats struct {
	// Frames is the good channel frames delivered.
	Frames uint64
	// Telemetry is the good frames that carry no channels (CRSF link
	// statistics and other types), which are not delivered as a Frame.
	Telemetry uint64
	// BadFrames is the frames rejected: bad checksum or CRC, bad footer or
	// length, cut short by an idle gap, a PPM frame with an out-of-range
	// interval, a PWM pulse out of range.
	BadFrames uint64
	// Discarded is the bytes (or edges) skipped while looking for the start
	// of a frame.
	Discarded uint64
}

// ByteDecoder is the streaming decoder of a serial protocol.
type ByteDecoder interface {
	// Feed hands over bytes as they arrived at at (uart.Port.Receive's
	// arguments). Good frames go to the callback given at construction,
	// before Feed returns. Feed must not be called concurrently.
	Feed(p []byte, at time.Time)
	// Stats returns the counts so far.
	Stats() Stats
}

// NewByteDecoder returns the decoder of serial protocol p, delivering frames
// to onFrame.
func NewByteDecoder(p Protocol, onFrame func(Frame)) (ByteDecoder, error) {
	switch p {
	case SBUS:
		return NewSBUSDecoder(onFrame), nil
	case IBUS:
		return NewIBUSDecoder(onFrame), nil
	case CRSF:
		return NewCRSFDecoder(onFrame), nil
	}
	return nil, fmt.Errorf("rc: protocol %q is not a serial protocol (want sbus, ibus or crsf)", p)
}

// Line speeds.
const (
	SBUSBaud = 100000
	IBUSBaud = 115200
	CRSFBaud = 420000
)

// Frame periods as real receivers send them.
const (
	SBUSPeriod     = 14 * time.Millisecond // analogue-servo mode
	SBUSFastPeriod = 7 * time.Millisecond  // high-speed mode
	IBUSPeriod     = 7 * time.Millisecond
	CRSFPeriod     = 4 * time.Millisecond // ExpressLRS at 250 Hz
	PPMPeriod      = 22500 * time.Microsecond
	PWMPeriod      = 20 * time.Millisecond // 50 Hz servo frame
)

// PortConfig returns the UART settings serial protocol p needs, for
// uart.Port.Configure: SBUS 100000 baud 8E2 inverted, IBUS 115200 8N1,
// CRSF 420000 8N1.
func PortConfig(p Protocol) (uart.Config, error) {
	switch p {
	case SBUS:
		return uart.Config{Baud: SBUSBaud, DataBits: 8, Parity: uart.EvenParity, StopBits: 2, Inverted: true}, nil
	case IBUS:
		return uart.Config{Baud: IBUSBaud, DataBits: 8, Parity: uart.NoParity, StopBits: 1}, nil
	case CRSF:
		return uart.Config{Baud: CRSFBaud, DataBits: 8, Parity: uart.NoParity, StopBits: 1}, nil
	}
	return uart.Config{}, fmt.Errorf("rc: protocol %q has no UART settings (want sbus, ibus or crsf)", p)
}

// byteTime is how long one character takes on the line with c's settings:
// start bit, data bits, parity, stop bits.
func byteTime(c uart.Config) time.Duration {
	bits := 1 + c.DataBits + c.StopBits
	if c.Parity != uart.NoParity {
		bits++
	}
	return time.Duration(bits) * time.Second / time.Duration(c.Baud)
}

// framer holds what every byte decoder needs to find frames in a stream:
// the partial frame, when the last chunk arrived and the counts.
//
// Idle gaps are judged from chunk stamps. A UART reader stamps a chunk when
// it gets it, after its last byte arrived, so the line was idle before the
// chunk for the gap between the stamps less the time the chunk's own bytes
// took on the wire.
type framer struct {
	buf      []byte
	n        int
	last     time.Time // stamp of the previous chunk
	haveLast bool
	byteTime time.Duration
	maxIdle  time.Duration // an idle line longer than this ends a partial frame
	stats    Stats
	lastGood time.Time // when the previous good frame arrived
	haveGood bool
}

// chunk starts a new chunk of length l arriving at at. A partial frame
// left before an idle gap can never complete: it is dropped as a bad frame,
// but the bytes after its first are searched again, so that a real frame
// swallowed by a false start (noise that began with a header byte) still
// comes out, stamped with the time it arrived.
func (f *framer) chunk(l int, at time.Time, push func(b byte, at time.Time)) {
	if f.haveLast && f.n > 0 {
		idle := at.Sub(f.last) - time.Duration(l)*f.byteTime
		if idle > f.maxIdle {
			f.stats.BadFrames++
			for f.n > 0 {
				f.resync(push, f.last)
			}
		}
	}
	f.last, f.haveLast = at, true
}

// interval returns the time since the previous good frame and records at as
// the latest.
func (f *framer) interval(at time.Time) time.Duration {
	var d time.Duration
	if f.haveGood {
		d = at.Sub(f.lastGood)
	}
	f.lastGood, f.haveGood = at, true
	return d
}

// resync drops the first byte of a rejected frame and reprocesses the rest
// with push, so that a frame starting inside the rejected one is still found.
// The bytes are copied first: push writes into f.buf.
func (f *framer) resync(push func(b byte, at time.Time), at time.Time) {
	var tmp [64]byte
	rest := copy(tmp[:], f.buf[1:f.n])
	f.n = 0
	for _, b := range tmp[:rest] {
		push(b, at)
	}
}
