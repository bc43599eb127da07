package rc

import (
	"fmt"
	"time"
)

// CRSF addresses (the first byte of a frame).
const (
	CRSFAddrFlightController = 0xC8 // "sync": what a receiver sends to the flight controller
	CRSFAddrRadio            = 0xEA
	CRSFAddrReceiver         = 0xEC
	CRSFAddrTxModule         = 0xEE // some ExpressLRS receivers send this
)

// CRSF frame types this package decodes.
const (
	CRSFTypeLinkStatistics = 0x14
	CRSFTypeRCChannels     = 0x16 // RC_CHANNELS_PACKED
)

// CRSF sizes: a frame is [addr][len][type][payload][crc], len counting type,
// payload and crc.
const (
	CRSFMaxFrameLen        = 64
	CRSFMaxPayload         = CRSFMaxFrameLen - 4
	CRSFChannelsPayloadLen = 22
	CRSFLinkStatsLen       = 10
	CRSFChannels           = 16
)

// CRSF raw values of the usual stick range: 172 ↔ 988 µs, 992 ↔ 1500 µs,
// 1811 ↔ 2012 µs.
const (
	CRSFRawMin    = 172
	CRSFRawCenter = 992
	CRSFRawMax    = 1811
)

// crsfGap is the idle time that drops a partial CRSF frame. A 64-byte frame
// takes 1.5 ms at 420000 baud; Betaflight allows 1.75 ms.
const crsfGap = 1750 * time.Microsecond

// LinkStats is the payload of a LINK_STATISTICS frame. RSSI values are
// carried as positive numbers of −dBm (60 means −60 dBm).
type LinkStats struct {
	UplinkRSSI1   uint8 // antenna 1, −dBm
	UplinkRSSI2   uint8 // antenna 2, −dBm
	UplinkLQ      uint8 // link quality, % of packets received
	UplinkSNR     int8  // dB
	ActiveAntenna uint8 // 0 or 1
	RFMode        uint8 // packet rate index, protocol specific
	TxPower       uint8 // enum, see TxPowerMilliwatts
	DownlinkRSSI  uint8 // −dBm
	DownlinkLQ    uint8 // %
	DownlinkSNR   int8  // dB
}

// RSSIdBm returns the uplink RSSI of the active antenna in dBm (negative).
func (l LinkStats) RSSIdBm() int {
	if l.ActiveAntenna == 1 {
		return -int(l.UplinkRSSI2)
	}
	return -int(l.UplinkRSSI1)
}

// TxPowerMilliwatts decodes the TX power enum; unknown values give 0.
func (l LinkStats) TxPowerMilliwatts() int {
	mw := [...]int{0, 10, 25, 100, 500, 1000, 2000, 250, 50}
	if int(l.TxPower) < len(mw) {
		return mw[l.TxPower]
	}
	return 0
}

// AppendPayload appends the 10-byte payload to dst.
func (l *LinkStats) AppendPayload(dst []byte) []byte {
	return append(dst, l.UplinkRSSI1, l.UplinkRSSI2, l.UplinkLQ, byte(l.UplinkSNR),
		l.ActiveAntenna, l.RFMode, l.TxPower, l.DownlinkRSSI, l.DownlinkLQ, byte(l.DownlinkSNR))
}

// ParseLinkStats decodes a LINK_STATISTICS payload.
func ParseLinkStats(p []byte) (LinkStats, error) {
	if len(p) != CRSFLinkStatsLen {
		return LinkStats{}, fmt.Errorf("rc: CRSF link statistics payload is %d bytes, want %d", len(p), CRSFLinkStatsLen)
	}
	return LinkStats{
		UplinkRSSI1: p[0], UplinkRSSI2: p[1], UplinkLQ: p[2], UplinkSNR: int8(p[3]),
		ActiveAntenna: p[4], RFMode: p[5], TxPower: p[6],
		DownlinkRSSI: p[7], DownlinkLQ: p[8], DownlinkSNR: int8(p[9]),
	}, nil
}

// CRC8DVBS2 is CRSF's checksum: CRC-8, polynomial 0xD5, MSB first, initial
// value 0, no reflection, no final XOR.
func CRC8DVBS2(b []byte) byte {
	var crc byte
	for _, x := range b {
		crc = crc8DVBS2Table[crc^x]
	}
	return crc
}

// crc8DVBS2Table is CRC8DVBS2 of each single byte, so that the checksum
// costs one lookup a byte. A string constant keeps it immutable;
// TestCRC8Table checks it against the bitwise definition.
const crc8DVBS2Table = "" +
	"\x00\xd5\x7f\xaa\xfe\x2b\x81\x54\x29\xfc\x56\x83\xd7\x02\xa8\x7d" +
	"\x52\x87\x2d\xf8\xac\x79\xd3\x06\x7b\xae\x04\xd1\x85\x50\xfa\x2f" +
	"\xa4\x71\xdb\x0e\x5a\x8f\x25\xf0\x8d\x58\xf2\x27\x73\xa6\x0c\xd9" +
	"\xf6\x23\x89\x5c\x08\xdd\x77\xa2\xdf\x0a\xa0\x75\x21\xf4\x5e\x8b" +
	"\x9d\x48\xe2\x37\x63\xb6\x1c\xc9\xb4\x61\xcb\x1e\x4a\x9f\x35\xe0" +
	"\xcf\x1a\xb0\x65\x31\xe4\x4e\x9b\xe6\x33\x99\x4c\x18\xcd\x67\xb2" +
	"\x39\xec\x46\x93\xc7\x12\xb8\x6d\x10\xc5\x6f\xba\xee\x3b\x91\x44" +
	"\x6b\xbe\x14\xc1\x95\x40\xea\x3f\x42\x97\x3d\xe8\xbc\x69\xc3\x16" +
	"\xef\x3a\x90\x45\x11\xc4\x6e\xbb\xc6\x13\xb9\x6c\x38\xed\x47\x92" +
	"\xbd\x68\xc2\x17\x43\x96\x3c\xe9\x94\x41\xeb\x3e\x6a\xbf\x15\xc0" +
	"\x4b\x9e\x34\xe1\xb5\x60\xca\x1f\x62\xb7\x1d\xc8\x9c\x49\xe3\x36" +
	"\x19\xcc\x66\xb3\xe7\x32\x98\x4d\x30\xe5\x4f\x9a\xce\x1b\xb1\x64" +
	"\x72\xa7\x0d\xd8\x8c\x59\xf3\x26\x5b\x8e\x24\xf1\xa5\x70\xda\x0f" +
	"\x20\xf5\x5f\x8a\xde\x0b\xa1\x74\x09\xdc\x76\xa3\xf7\x22\x88\x5d" +
	"\xd6\x03\xa9\x7c\x28\xfd\x57\x82\xff\x2a\x80\x55\x01\xd4\x7e\xab" +
	"\x84\x51\xfb\x2e\x7a\xaf\x05\xd0\xad\x78\xd2\x07\x53\x86\x2c\xf9"

// AppendCRSF appends a frame of type typ with payload to dst, addressed to
// addr. It fails if the payload does not fit in a 64-byte frame.
func AppendCRSF(dst []byte, addr, typ byte, payload []byte) ([]byte, error) {
	if len(payload) > CRSFMaxPayload {
		return dst, fmt.Errorf("rc: CRSF payload is %d bytes, want at most %d", len(payload), CRSFMaxPayload)
	}
	start := len(dst)
	dst = append(dst, addr, byte(len(payload)+2), typ)
	dst = append(dst, payload...)
	return append(dst, CRC8DVBS2(dst[start+2:])), nil
}

// AppendCRSFChannels appends an RC_CHANNELS_PACKED frame (26 bytes) to dst.
// Raw values above 2047 are clamped.
func AppendCRSFChannels(dst []byte, addr byte, raw *[CRSFChannels]uint16) []byte {
	var p [CRSFChannelsPayloadLen]byte
	pack11(p[:], raw)
	dst, _ = AppendCRSF(dst, addr, CRSFTypeRCChannels, p[:])
	return dst
}

// AppendCRSFLinkStats appends a LINK_STATISTICS frame (14 bytes) to dst.
func AppendCRSFLinkStats(dst []byte, addr byte, l *LinkStats) []byte {
	var p [CRSFLinkStatsLen]byte
	l.AppendPayload(p[:0])
	dst, _ = AppendCRSF(dst, addr, CRSFTypeLinkStatistics, p[:])
	return dst
}

// CRSFToMicros converts a CRSF value to µs as Betaflight does, 1024·v/1639 +
// 881 truncated (≈ 0.62477·v + 881), so that 172, 992 and 1811 give 988,
// 1500 and 2012.
func CRSFToMicros(v uint16) uint16 { return uint16(uint32(v)*1024/1639 + 881) }

// MicrosToCRSF converts µs to a CRSF value that CRSFToMicros maps back to
// the same µs, clamped to the 11-bit range (881–2159 µs). Where two values
// map to the same µs it takes the larger, which gives the standard 172, 992
// and 1811 for 988, 1500 and 2012 µs.
func MicrosToCRSF(us uint16) uint16 {
	if us < 881 {
		return 0
	}
	v := ((uint32(us-881)+1)*1639 - 1) / 1024
	if v > 2047 {
		v = 2047
	}
	return uint16(v)
}

// CRSFFrame is one CRSF frame as found on the wire.
type CRSFFrame struct {
	Addr    byte
	Type    byte
	Payload []byte
}

// ParseCRSF decodes one complete frame, checking address, length and CRC.
// Payload aliases b.
func ParseCRSF(b []byte) (CRSFFrame, error) {
	if len(b) < 4 {
		return CRSFFrame{}, fmt.Errorf("rc: CRSF frame is %d bytes, want at least 4", len(b))
	}
	if !crsfAddrOK(b[0]) {
		return CRSFFrame{}, fmt.Errorf("rc: CRSF address is %#02x, want 0xc8 or 0xee", b[0])
	}
	if int(b[1])+2 != len(b) {
		return CRSFFrame{}, fmt.Errorf("rc: CRSF length byte is %d for a %d-byte frame, want %d", b[1], len(b), len(b)-2)
	}
	if got, want := b[len(b)-1], CRC8DVBS2(b[2:len(b)-1]); got != want {
		return CRSFFrame{}, fmt.Errorf("rc: CRSF CRC is %#02x, want %#02x", got, want)
	}
	return CRSFFrame{Addr: b[0], Type: b[2], Payload: b[3 : len(b)-1]}, nil
}

// ParseCRSFChannels decodes an RC_CHANNELS_PACKED payload.
func ParseCRSFChannels(p []byte) ([CRSFChannels]uint16, error) {
	var raw [CRSFChannels]uint16
	if len(p) != CRSFChannelsPayloadLen {
		return raw, fmt.Errorf("rc: CRSF channels payload is %d bytes, want %d", len(p), CRSFChannelsPayloadLen)
	}
	unpack11(p, &raw)
	return raw, nil
}

// crsfAddrOK accepts the addresses receivers put on their frames to the
// flight controller.
func crsfAddrOK(b byte) bool { return b == CRSFAddrFlightController || b == CRSFAddrTxModule }

// CRSFDecoder is the streaming CRSF decoder. It implements ByteDecoder.
// RC_CHANNELS_PACKED frames are delivered; LINK_STATISTICS frames are kept
// and attached to the channel frames that follow; other well-formed frames
// are counted as telemetry.
type CRSFDecoder struct {
	f        framer
	buf      [CRSFMaxFrameLen]byte
	onFrame  func(Frame)
	link     LinkStats
	linkTime time.Time
	hasLink  bool
}

// NewCRSFDecoder returns a decoder that calls onFrame (nil: nobody) with
// every good channel frame.
func NewCRSFDecoder(onFrame func(Frame)) *CRSFDecoder {
	cfg, _ := PortConfig(CRSF)
	d := &CRSFDecoder{onFrame: onFrame}
	d.f = framer{byteTime: byteTime(cfg), maxIdle: crsfGap}
	d.f.buf = d.buf[:]
	return d
}

// Feed implements ByteDecoder.
func (d *CRSFDecoder) Feed(p []byte, at time.Time) {
	if len(p) == 0 {
		return
	}
	d.f.chunk(len(p), at, d.push)
	for _, b := range p {
		d.push(b, at)
	}
}

// Stats implements ByteDecoder.
func (d *CRSFDecoder) Stats() Stats { return d.f.stats }

// Link returns the latest link statistics and when they arrived; ok is
// false until the first LINK_STATISTICS frame.
func (d *CRSFDecoder) Link() (l LinkStats, at time.Time, ok bool) {
	return d.link, d.linkTime, d.hasLink
}

func (d *CRSFDecoder) push(b byte, at time.Time) {
	f := &d.f
	if f.n == 0 && !crsfAddrOK(b) {
		f.stats.Discarded++
		return
	}
	d.buf[f.n] = b
	f.n++
	if f.n == 2 && (b < 2 || int(b) > CRSFMaxFrameLen-2) {
		// An impossible length: the address byte was data.
		f.stats.BadFrames++
		f.resync(d.push, at)
		return
	}
	if f.n < 2 || f.n < int(d.buf[1])+2 {
		return
	}
	fr, err := ParseCRSF(d.buf[:f.n])
	if err == nil {
		err = d.dispatch(fr, at)
	}
	if err != nil {
		f.stats.BadFrames++
		f.resync(d.push, at)
		return
	}
	f.n = 0
}

// dispatch handles a frame whose CRC is good. A known type with the wrong
// payload length is an error.
func (d *CRSFDecoder) dispatch(c CRSFFrame, at time.Time) error {
	switch c.Type {
	case CRSFTypeLinkStatistics:
		l, err := ParseLinkStats(c.Payload)
		if err != nil {
			return err
		}
		d.link, d.linkTime, d.hasLink = l, at, true
		d.f.stats.Telemetry++
	case CRSFTypeRCChannels:
		raw, err := ParseCRSFChannels(c.Payload)
		if err != nil {
			return err
		}
		d.f.stats.Frames++
		fr := Frame{Protocol: CRSF, Time: at, Interval: d.f.interval(at), Count: CRSFChannels,
			HasLink: d.hasLink, Link: d.link, LinkTime: d.linkTime}
		for i, v := range raw {
			fr.Raw[i] = v
			fr.Micros[i] = CRSFToMicros(v)
		}
		if d.onFrame != nil {
			d.onFrame(fr)
		}
	default:
		d.f.stats.Telemetry++
	}
	return nil
}
