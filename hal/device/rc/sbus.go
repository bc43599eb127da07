package rc

import (
	"fmt"
	"time"
)

// SBUS frame layout: header, 22 bytes of 16 packed 11-bit channels, flags,
// footer.
const (
	SBUSFrameLen = 25
	SBUSHeader   = 0x0F
	SBUSChannels = 16
)

// SBUS flag bits (byte 23).
const (
	SBUSFlagCh17      = 1 << 0
	SBUSFlagCh18      = 1 << 1
	SBUSFlagFrameLost = 1 << 2
	SBUSFlagFailsafe  = 1 << 3
)

// SBUS raw values of the usual stick range: 172 ↔ 988 µs, 992 ↔ 1500 µs,
// 1811 ↔ 2012 µs.
const (
	SBUSRawMin    = 172
	SBUSRawCenter = 992
	SBUSRawMax    = 1811
)

// sbusGap is the idle time that restarts SBUS framing: frames come at least
// 7 ms apart and a frame is sent back to back in 3 ms.
const sbusGap = 3 * time.Millisecond

// SBUSFrame is the content of one SBUS frame.
type SBUSFrame struct {
	Raw                 [SBUSChannels]uint16 // 11-bit values, 0–2047
	Ch17, Ch18          bool
	FrameLost, Failsafe bool
}

// Append appends the 25-byte frame to dst. Raw values above 2047 are
// clamped. The footer is 0x00 (plain SBUS, not SBUS2).
func (s *SBUSFrame) Append(dst []byte) []byte {
	var b [SBUSFrameLen]byte
	b[0] = SBUSHeader
	pack11(b[1:23], &s.Raw)
	if s.Ch17 {
		b[23] |= SBUSFlagCh17
	}
	if s.Ch18 {
		b[23] |= SBUSFlagCh18
	}
	if s.FrameLost {
		b[23] |= SBUSFlagFrameLost
	}
	if s.Failsafe {
		b[23] |= SBUSFlagFailsafe
	}
	return append(dst, b[:]...)
}

// ParseSBUS decodes one complete frame.
func ParseSBUS(b []byte) (SBUSFrame, error) {
	var s SBUSFrame
	if len(b) != SBUSFrameLen {
		return s, fmt.Errorf("rc: SBUS frame is %d bytes, want %d", len(b), SBUSFrameLen)
	}
	if b[0] != SBUSHeader {
		return s, fmt.Errorf("rc: SBUS header is %#02x, want %#02x", b[0], SBUSHeader)
	}
	if !sbusFooterOK(b[24]) {
		return s, fmt.Errorf("rc: SBUS footer is %#02x, want 0x00 or an SBUS2 footer (0x04, 0x14, 0x24, 0x34)", b[24])
	}
	unpack11(b[1:23], &s.Raw)
	f := b[23]
	s.Ch17 = f&SBUSFlagCh17 != 0
	s.Ch18 = f&SBUSFlagCh18 != 0
	s.FrameLost = f&SBUSFlagFrameLost != 0
	s.Failsafe = f&SBUSFlagFailsafe != 0
	return s, nil
}

// sbusFooterOK accepts plain SBUS's 0x00 and SBUS2's footers, which cycle
// through 0x04, 0x14, 0x24 and 0x34 to mark telemetry slots.
func sbusFooterOK(b byte) bool { return b == 0x00 || b&0xCF == 0x04 }

// SBUSToMicros converts an SBUS value to µs: 5·v/8 + 880, rounded, so that
// 172, 992 and 1811 give 988, 1500 and 2012.
func SBUSToMicros(v uint16) uint16 { return uint16((5*uint32(v)+4)/8 + 880) }

// MicrosToSBUS converts µs to an SBUS value that SBUSToMicros maps back to
// the same µs, clamped to the 11-bit range (880–2159 µs). Where two values
// map to the same µs it takes the smaller, which gives the standard 172, 992
// and 1811 for 988, 1500 and 2012 µs.
func MicrosToSBUS(us uint16) uint16 {
	if us <= 880 {
		return 0
	}
	v := uint32(us-880) * 8 / 5
	if v > 2047 {
		v = 2047
	}
	return uint16(v)
}

// pack11 packs 16 11-bit values LSB first into 22 bytes, as SBUS and CRSF
// carry them: bytes as one little-endian integer, channel i at bits
// 11i..11i+10.
func pack11(dst []byte, v *[16]uint16) {
	var acc uint32
	bits := 0
	j := 0
	for _, x := range v {
		if x > 2047 {
			x = 2047
		}
		acc |= uint32(x) << bits
		bits += 11
		for bits >= 8 {
			dst[j] = byte(acc)
			acc >>= 8
			bits -= 8
			j++
		}
	}
}

// unpack11 is the inverse of pack11.
func unpack11(src []byte, dst *[16]uint16) {
	var acc uint32
	bits := 0
	j := 0
	for _, b := range src[:22] {
		acc |= uint32(b) << bits
		bits += 8
		if bits >= 11 {
			dst[j] = uint16(acc & 0x7FF)
			acc >>= 11
			bits -= 11
			j++
		}
	}
}

// SBUSDecoder is the streaming SBUS decoder. It implements ByteDecoder.
type SBUSDecoder struct {
	f       framer
	buf     [SBUSFrameLen]byte
	onFrame func(Frame)
}

// NewSBUSDecoder returns a decoder that calls onFrame (nil: nobody) with
// every good frame.
func NewSBUSDecoder(onFrame func(Frame)) *SBUSDecoder {
	cfg, _ := PortConfig(SBUS)
	d := &SBUSDecoder{onFrame: onFrame}
	d.f = framer{byteTime: byteTime(cfg), maxIdle: sbusGap}
	d.f.buf = d.buf[:]
	return d
}

// Feed implements ByteDecoder.
func (d *SBUSDecoder) Feed(p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	d.f.chunk(len(p), at, d.push)
	for _, b := range p {
		d.push(b, at)
	}
}

// Stats implements ByteDecoder.
func (d *SBUSDecoder) Stats() Stats { return d.f.stats }

func (d *SBUSDecoder) push(b byte, at time.Time) {
	f := &d.f
	if f.n == 0 && b != SBUSHeader {
		f.stats.Discarded++
		return
	}
	d.buf[f.n] = b
	f.n++
	if f.n < SBUSFrameLen {
		return
	}
	s, err := ParseSBUS(d.buf[:])
	if err != nil {
		f.stats.BadFrames++
		f.resync(d.push, at)
		return
	}
	f.n = 0
	f.stats.Frames++
	fr := Frame{Protocol: SBUS, Time: at, Interval: f.interval(at), Count: SBUSChannels,
		Ch17: s.Ch17, Ch18: s.Ch18, FrameLost: s.FrameLost, Failsafe: s.Failsafe}
	for i, v := range s.Raw {
		fr.Raw[i] = v
		fr.Micros[i] = SBUSToMicros(v)
	}
	if d.onFrame != nil {
		d.onFrame(fr)
	}
}
