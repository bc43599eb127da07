package livelink

import "bytes"

// A capture file is what a packet sniffer keeps of the app's stream: the
// UDP payloads back to back, with no framing and no timestamps. Each
// packet's length follows from its own fields, so SplitCapture walks the
// file packet by packet; where a packet does not decode it looks for the
// next place where one does, and reports the bytes in between as rejected.

// CaptureSegment is a run of bytes of a capture: one good packet, or a
// rejected stretch (Err says why its first byte did not start a packet).
type CaptureSegment struct {
	Offset int
	Bytes  []byte
	Packet FacePacket // valid when Err is nil
	Err    error
}

// SplitCapture cuts a capture into good packets and rejected stretches, in
// file order. It never fails: garbage only makes rejected segments.
func SplitCapture(data []byte) []CaptureSegment {
	var out []CaptureSegment
	off := 0
	for off < len(data) {
		p, n, err := parseFace(data[off:])
		if err == nil {
			out = append(out, CaptureSegment{Offset: off, Bytes: data[off : off+n], Packet: p})
			off += n
			continue
		}
		next := resync(data, off+1)
		out = append(out, CaptureSegment{Offset: off, Bytes: data[off:next], Err: err})
		off = next
	}
	return out
}

// resync returns the first offset at or after from where a packet
// decodes, or len(data).
func resync(data []byte, from int) int {
	for off := from; off < len(data); {
		i := bytes.IndexByte(data[off:], FacePacketVersion)
		if i < 0 {
			return len(data)
		}
		off += i
		if _, _, err := parseFace(data[off:]); err == nil {
			return off
		}
		off++
	}
	return len(data)
}
