package rc

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// randomFrame returns one frame of serial protocol p with random channels,
// and the raw values a decoder must give back.
func randomFrame(p Protocol, r *rand.Rand) ([]byte, [MaxChannels]uint16) {
	var raw [MaxChannels]uint16
	switch p {
	case SBUS:
		var s SBUSFrame
		for i := range s.Raw {
			s.Raw[i] = uint16(r.IntN(2048))
			raw[i] = s.Raw[i]
		}
		return s.Append(nil), raw
	case IBUS:
		var s IBUSFrame
		for i := range s.Micros {
			s.Micros[i] = uint16(800 + r.IntN(1400))
			raw[i] = s.Micros[i]
		}
		return s.Append(nil), raw
	default:
		for i := range CRSFChannels {
			raw[i] = uint16(r.IntN(2048))
		}
		v := raw
		return AppendCRSFChannels(nil, CRSFAddrFlightController, &v), raw
	}
}

// period returns the frame period of serial protocol p.
func period(p Protocol) time.Duration {
	switch p {
	case SBUS:
		return SBUSPeriod
	case IBUS:
		return IBUSPeriod
	}
	return CRSFPeriod
}

// isStart reports whether b can start a frame of p.
func isStart(p Protocol, b byte) bool {
	switch p {
	case SBUS:
		return b == SBUSHeader
	case IBUS:
		return b == IBUSLength
	}
	return crsfAddrOK(b)
}

func rawOf(fs []Frame) [][MaxChannels]uint16 {
	var out [][MaxChannels]uint16
	for _, f := range fs {
		out = append(out, f.Raw)
	}
	return out
}

var serialProtocols = []Protocol{SBUS, IBUS, CRSF}

// TestDecoderChunking feeds a stream of frames cut into random chunks, each
// stamped as a UART reader would (after its last byte), and expects every
// frame back in order with the frame's time and interval.
func TestDecoderChunking(t *testing.T) {
	for _, p := range serialProtocols {
		t.Run(string(p), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(p))))
			cfg, _ := PortConfig(p)
			bt := byteTime(cfg)
			var got []Frame
			d, _ := NewByteDecoder(p, collect(&got))
			var want [][MaxChannels]uint16
			for i := range 200 {
				b, raw := randomFrame(p, r)
				want = append(want, raw)
				start := t0.Add(time.Duration(i) * period(p))
				for off := 0; off < len(b); {
					n := min(1+r.IntN(12), len(b)-off)
					off += n
					d.Feed(b[off-n:off], start.Add(time.Duration(off)*bt))
				}
			}
			if !slices.Equal(rawOf(got), want) {
				t.Fatalf("decoded %d frames, want %d; first difference matters (stats %+v)", len(got), len(want), d.Stats())
			}
			if st := d.Stats(); st.Frames != 200 || st.BadFrames != 0 || st.Discarded != 0 {
				t.Errorf("stats = %+v", st)
			}
			for i, f := range got[1:] {
				if f.Interval != period(p) {
					t.Fatalf("frame %d interval = %v, want %v", i+1, f.Interval, period(p))
				}
			}
		})
	}
}

// TestDecoderGarbageInStream puts garbage right before frames, in the same
// chunks, with no idle gap to help: the decoder must skip it by header.
func TestDecoderGarbageInStream(t *testing.T) {
	for _, p := range serialProtocols {
		t.Run(string(p), func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(len(p))))
			var got []Frame
			d, _ := NewByteDecoder(p, collect(&got))
			var want [][MaxChannels]uint16
			var stream []byte
			garbage := 0
			for range 100 {
				for range r.IntN(30) {
					b := byte(r.IntN(256))
					if isStart(p, b) {
						continue
					}
					stream = append(stream, b)
					garbage++
				}
				b, raw := randomFrame(p, r)
				stream = append(stream, b...)
				want = append(want, raw)
			}
			d.Feed(stream, t0)
			if !slices.Equal(rawOf(got), want) {
				t.Fatalf("decoded %d frames, want %d (stats %+v)", len(got), len(want), d.Stats())
			}
			if st := d.Stats(); st.Discarded != uint64(garbage) {
				t.Errorf("discarded %d bytes, want %d", st.Discarded, garbage)
			}
		})
	}
}

// TestDecoderNoiseOnIdleLine puts bursts of arbitrary noise (header bytes
// included) on the line between frames, as a loose connector would. Every
// frame must still come through and nothing the noise spells may be taken
// for one.
func TestDecoderNoiseOnIdleLine(t *testing.T) {
	for _, p := range serialProtocols {
		t.Run(string(p), func(t *testing.T) {
			r := rand.New(rand.NewPCG(13, uint64(len(p))))
			var got []Frame
			d, _ := NewByteDecoder(p, collect(&got))
			var want [][MaxChannels]uint16
			noisy := 0
			for i := range 300 {
				start := t0.Add(time.Duration(i) * period(p))
				b, raw := randomFrame(p, r)
				d.Feed(b, start)
				want = append(want, raw)
				noise := make([]byte, 1+r.IntN(20))
				for j := range noise {
					noise[j] = byte(r.IntN(256))
				}
				if i%3 == 0 {
					noise[0] = b[0] // a burst that starts like a frame
				}
				if isStart(p, noise[0]) {
					noisy++
				}
				d.Feed(noise, start.Add(period(p)/2))
			}
			if !slices.Equal(rawOf(got), want) {
				t.Fatalf("decoded %d frames, want %d (stats %+v)", len(got), len(want), d.Stats())
			}
			if st := d.Stats(); st.BadFrames == 0 || noisy == 0 {
				t.Errorf("stats = %+v after %d bursts starting like a frame; want bad frames counted", st, noisy)
			}
		})
	}
}

// TestDecoderCorruptFrame flips one bit of a frame. IBUS and CRSF reject it
// by checksum; SBUS, which has none, by its footer. The next frame must come
// through either way.
func TestDecoderCorruptFrame(t *testing.T) {
	for _, p := range serialProtocols {
		t.Run(string(p), func(t *testing.T) {
			r := rand.New(rand.NewPCG(17, 0))
			var got []Frame
			d, _ := NewByteDecoder(p, collect(&got))
			bad, _ := randomFrame(p, r)
			bad[len(bad)-1] ^= 0x40 // the checksum or footer
			good, raw := randomFrame(p, r)
			d.Feed(append(bad, good...), t0)
			if len(got) != 1 || got[0].Raw != raw {
				t.Fatalf("frames = %v, want only the good one", rawOf(got))
			}
			if st := d.Stats(); st.BadFrames < 1 {
				t.Errorf("stats = %+v, want a bad frame", st)
			}
		})
	}
}

// TestDecoderIdleGapDropsPartialFrame sends half a frame, leaves the line
// idle, then a whole frame: the half must not be glued to it.
func TestDecoderIdleGapDropsPartialFrame(t *testing.T) {
	for _, p := range serialProtocols {
		t.Run(string(p), func(t *testing.T) {
			r := rand.New(rand.NewPCG(19, 0))
			var got []Frame
			d, _ := NewByteDecoder(p, collect(&got))
			half, _ := randomFrame(p, r)
			good, raw := randomFrame(p, r)
			d.Feed(half[:len(half)/2], t0)
			d.Feed(good, t0.Add(period(p)))
			if len(got) != 1 || got[0].Raw != raw {
				t.Fatalf("frames = %v, want only the whole one", rawOf(got))
			}
			if st := d.Stats(); st.BadFrames != 1 {
				t.Errorf("stats = %+v, want exactly one bad (cut short) frame", st)
			}
		})
	}
}

// TestDecoderSplitByReaderLatency checks that a frame whose two halves were
// stamped far apart only because the second half took time on the wire is
// not mistaken for an idle gap.
func TestDecoderSplitByReaderLatency(t *testing.T) {
	p := IBUS
	r := rand.New(rand.NewPCG(23, 0))
	var got []Frame
	d, _ := NewByteDecoder(p, collect(&got))
	b, raw := randomFrame(p, r)
	cfg, _ := PortConfig(p)
	bt := byteTime(cfg)
	// 20 bytes take 1.7 ms at 115200 baud, far more than IBUS's 500 µs gap.
	d.Feed(b[:12], t0.Add(12*bt))
	d.Feed(b[12:], t0.Add(32*bt+100*time.Microsecond))
	if len(got) != 1 || got[0].Raw != raw {
		t.Fatalf("frames = %v, want the one frame (stats %+v)", rawOf(got), d.Stats())
	}
}

// TestSBUSFlagsInStream checks the flags reach the common Frame.
func TestSBUSFlagsInStream(t *testing.T) {
	var got []Frame
	d := NewSBUSDecoder(collect(&got))
	s := SBUSFrame{FrameLost: true, Failsafe: true, Ch18: true}
	d.Feed(s.Append(nil), t0)
	if len(got) != 1 || !got[0].FrameLost || !got[0].Failsafe || !got[0].Ch18 || got[0].Ch17 {
		t.Fatalf("frames = %+v", got)
	}
}

// TestEncodersAppend checks that encoders append rather than overwrite.
func TestEncodersAppend(t *testing.T) {
	prefix := []byte{1, 2, 3}
	var s SBUSFrame
	var i IBUSFrame
	var raw [16]uint16
	for _, b := range [][]byte{
		s.Append(bytes.Clone(prefix)),
		i.Append(bytes.Clone(prefix)),
		AppendCRSFChannels(bytes.Clone(prefix), CRSFAddrFlightController, &raw),
	} {
		if !bytes.HasPrefix(b, prefix) {
			t.Errorf("%x lost its prefix", b)
		}
	}
}
