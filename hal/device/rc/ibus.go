package rc

import (
	"encoding/binary"
	"fmt"
	"time"
)

// IBUS frame layout: length 0x20, command 0x40, 14 little-endian channels,
// little-endian checksum.
const (
	IBUSFrameLen = 32
	IBUSLength   = 0x20 // the first byte is the frame length
	IBUSCommand  = 0x40 // servo channel data
	IBUSChannels = 14
)

// ibusGap is the idle time that restarts IBUS framing.
const ibusGap = 500 * time.Microsecond

// IBUSFrame is the content of one IBUS frame: channels in µs.
type IBUSFrame struct {
	Micros [IBUSChannels]uint16
}

// Append appends the 32-byte frame to dst. Values above 4095 are clamped
// to the 12 bits a channel has.
func (s *IBUSFrame) Append(dst []byte) []byte {
	var b [IBUSFrameLen]byte
	b[0], b[1] = IBUSLength, IBUSCommand
	for i, v := range s.Micros {
		binary.LittleEndian.PutUint16(b[2+2*i:], min(v, 0x0FFF))
	}
	binary.LittleEndian.PutUint16(b[30:], ibusChecksum(b[:30]))
	return append(dst, b[:]...)
}

// ibusChecksum is 0xFFFF minus the sum of the bytes before it.
func ibusChecksum(b []byte) uint16 {
	sum := uint16(0xFFFF)
	for _, x := range b {
		sum -= uint16(x)
	}
	return sum
}

// ParseIBUS decodes one complete frame. Channels keep their 12 low bits:
// newer FlySky receivers put channels 15–18 in the high nibbles, which this
// decoder does not use.
func ParseIBUS(b []byte) (IBUSFrame, error) {
	var s IBUSFrame
	if len(b) != IBUSFrameLen {
		return s, fmt.Errorf("rc: IBUS frame is %d bytes, want %d", len(b), IBUSFrameLen)
	}
	if b[0] != IBUSLength || b[1] != IBUSCommand {
		return s, fmt.Errorf("rc: IBUS header is %#02x %#02x, want 0x20 0x40", b[0], b[1])
	}
	if got, want := binary.LittleEndian.Uint16(b[30:]), ibusChecksum(b[:30]); got != want {
		return s, fmt.Errorf("rc: IBUS checksum is %#04x, want %#04x", got, want)
	}
	for i := range s.Micros {
		s.Micros[i] = binary.LittleEndian.Uint16(b[2+2*i:]) & 0x0FFF
	}
	return s, nil
}

// IBUSDecoder is the streaming IBUS decoder. It implements ByteDecoder.
type IBUSDecoder struct {
	f       framer
	buf     [IBUSFrameLen]byte
	onFrame func(Frame)
}

// NewIBUSDecoder returns a decoder that calls onFrame (nil: nobody) with
// every good frame.
func NewIBUSDecoder(onFrame func(Frame)) *IBUSDecoder {
	cfg, _ := PortConfig(IBUS)
	d := &IBUSDecoder{onFrame: onFrame}
	d.f = framer{byteTime: byteTime(cfg), maxIdle: ibusGap}
	d.f.buf = d.buf[:]
	return d
}

// Feed implements ByteDecoder.
func (d *IBUSDecoder) Feed(p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	d.f.chunk(len(p), at, d.push)
	for _, b := range p {
		d.push(b, at)
	}
}

// Stats implements ByteDecoder.
func (d *IBUSDecoder) Stats() Stats { return d.f.stats }

func (d *IBUSDecoder) push(b byte, at time.Time) {
	f := &d.f
	switch {
	case f.n == 0 && b != IBUSLength:
		f.stats.Discarded++
		return
	case f.n == 1 && b != IBUSCommand:
		// Not a frame after all; the byte may itself start one.
		f.stats.Discarded++
		f.n = 0
		d.push(b, at)
		return
	}
	d.buf[f.n] = b
	f.n++
	if f.n < IBUSFrameLen {
		return
	}
	s, err := ParseIBUS(d.buf[:])
	if err != nil {
		f.stats.BadFrames++
		f.resync(d.push, at)
		return
	}
	f.n = 0
	f.stats.Frames++
	fr := Frame{Protocol: IBUS, Time: at, Interval: f.interval(at), Count: IBUSChannels}
	for i, v := range s.Micros {
		fr.Raw[i] = v
		fr.Micros[i] = v
	}
	if d.onFrame != nil {
		d.onFrame(fr)
	}
}
