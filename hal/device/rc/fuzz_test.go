package rc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/gpio"
)

// feedChunked feeds data to d in chunks whose sizes and gaps the data's own
// bytes choose, so the fuzzer explores framing across chunk edges and idle
// gaps too. The first byte of each chunk is its length (mod 32), the second
// the gap before it in 100 µs steps. It returns the bytes fed.
func feedChunked(d ByteDecoder, data []byte) (fed []byte) {
	at := t0
	for len(data) >= 2 {
		n, gap := int(data[0]%32)+1, time.Duration(data[1])*100*time.Microsecond
		data = data[2:]
		n = min(n, len(data))
		at = at.Add(gap)
		d.Feed(data[:n], at)
		fed = append(fed, data[:n]...)
		data = data[n:]
	}
	return fed
}

// fuzzSerial checks what must hold for any input: no panic, delivered
// frames carry in-range values and, for SBUS and CRSF, are really in the
// input, and the counts add up.
func fuzzSerial(t *testing.T, p Protocol, data []byte, chunked bool) {
	var got []Frame
	d, _ := NewByteDecoder(p, collect(&got))
	if chunked {
		data = feedChunked(d, data)
	} else {
		d.Feed(data, t0)
	}
	st := d.Stats()
	if st.Frames != uint64(len(got)) {
		t.Fatalf("stats count %d frames, %d delivered", st.Frames, len(got))
	}
	for _, f := range got {
		if f.Protocol != p {
			t.Fatalf("frame protocol %q from the %s decoder", f.Protocol, p)
		}
		for i := range f.Count {
			if f.Raw[i] > 4095 || f.Micros[i] > 4095 {
				t.Fatalf("channel %d out of range: %+v", i+1, f)
			}
		}
		switch p {
		case SBUS:
			s := SBUSFrame{Ch17: f.Ch17, Ch18: f.Ch18, FrameLost: f.FrameLost, Failsafe: f.Failsafe}
			copy(s.Raw[:], f.Raw[:16])
			// Header and channels; the flags byte's unused high bits are
			// not kept.
			if b := s.Append(nil); !bytes.Contains(data, b[:23]) {
				t.Fatalf("delivered SBUS frame %x is not in the input", b[:23])
			}
		case CRSF:
			var raw [16]uint16
			copy(raw[:], f.Raw[:16])
			if b := AppendCRSFChannels(nil, 0, &raw); !bytes.Contains(data, b[1:]) {
				t.Fatalf("delivered CRSF frame %x is not in the input", b[1:])
			}
		}
	}
}

func addSerialSeeds(f *testing.F, p Protocol, golden string) {
	g := mustHex(f, golden)
	f.Add(g)
	f.Add(append(append([]byte{0x0F, 0x20, 0x40, 0xC8, 0x18}, g...), g[:10]...))
	f.Add(bytes.Repeat(g, 3))
	f.Add([]byte{})
	b, _ := randomFrame(p, rand.New(rand.NewPCG(3, uint64(len(p)))))
	f.Add(append([]byte{5, 0}, b...))
}

func FuzzSBUSDecoder(f *testing.F) {
	addSerialSeeds(f, SBUS, sbusCentreHex)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSerial(t, SBUS, data, false)
		fuzzSerial(t, SBUS, data, true)
	})
}

func FuzzIBUSDecoder(f *testing.F) {
	addSerialSeeds(f, IBUS, ibusCentreHex)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSerial(t, IBUS, data, false)
		fuzzSerial(t, IBUS, data, true)
	})
}

func FuzzCRSFDecoder(f *testing.F) {
	addSerialSeeds(f, CRSF, crsfELRSHex)
	l := LinkStats{UplinkRSSI1: 50, UplinkLQ: 100}
	f.Add(AppendCRSFLinkStats(mustHex(f, crsfELRSHex), CRSFAddrFlightController, &l))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSerial(t, CRSF, data, false)
		fuzzSerial(t, CRSF, data, true)
	})
}

// channelsFrom turns fuzz bytes into 16 channel values below limit.
func channelsFrom(data []byte, limit uint16) [16]uint16 {
	var v [16]uint16
	for i := range v {
		if 2*i+1 < len(data) {
			v[i] = binary.LittleEndian.Uint16(data[2*i:]) % limit
		}
	}
	return v
}

// FuzzRoundTrip encodes channels from the fuzzer's bytes with every serial
// encoder and expects the decoders to give them back.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0xE0, 0x03}, false, false)
	f.Add(bytes.Repeat([]byte{0xFF}, 32), true, true)
	f.Fuzz(func(t *testing.T, data []byte, lost, failsafe bool) {
		var got []Frame
		s := SBUSFrame{Raw: channelsFrom(data, 2048), FrameLost: lost, Failsafe: failsafe, Ch17: lost != failsafe}
		NewSBUSDecoder(collect(&got)).Feed(s.Append(nil), t0)
		if len(got) != 1 || [16]uint16(got[0].Raw) != s.Raw || got[0].FrameLost != lost || got[0].Failsafe != failsafe || got[0].Ch17 != s.Ch17 {
			t.Fatalf("SBUS %+v → %+v", s, got)
		}
		got = got[:0]
		var ib IBUSFrame
		v := channelsFrom(data, 4096)
		copy(ib.Micros[:], v[:])
		NewIBUSDecoder(collect(&got)).Feed(ib.Append(nil), t0)
		if len(got) != 1 || [14]uint16(got[0].Micros[:14]) != ib.Micros {
			t.Fatalf("IBUS %+v → %+v", ib, got)
		}
		got = got[:0]
		raw := channelsFrom(data, 2048)
		NewCRSFDecoder(collect(&got)).Feed(AppendCRSFChannels(nil, CRSFAddrFlightController, &raw), t0)
		if len(got) != 1 || got[0].Raw != raw {
			t.Fatalf("CRSF %v → %+v", raw, got)
		}
	})
}

// edgesFrom turns fuzz bytes into edges: each pair of bytes is the time to
// the next edge in µs (little-endian), its low bit the level after it.
func edgesFrom(data []byte) []gpio.EdgeEvent {
	var out []gpio.EdgeEvent
	at := t0
	for i := 0; i+1 < len(data); i += 2 {
		v := binary.LittleEndian.Uint16(data[i:])
		at = at.Add(time.Duration(v>>1) * time.Microsecond)
		out = append(out, gpio.EdgeEvent{Level: v&1 == 1, Time: at})
	}
	return out
}

func FuzzPPMDecoder(f *testing.F) {
	var seed []byte
	for _, e := range ppmStream(3, []uint16{1000, 1500, 2000, 1100, 1900}, nil) {
		seed = binary.LittleEndian.AppendUint16(seed, uint16(e.Time.Sub(t0)/time.Microsecond%32768)<<1)
	}
	f.Add(seed)
	f.Add([]byte{0xFF, 0xFF, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []Frame
		d := NewPPMDecoder(nil, collect(&got))
		for _, e := range edgesFrom(data) {
			d.Edge(e)
		}
		for _, fr := range got {
			if fr.Count < PPMMinChannels || fr.Count > MaxChannels {
				t.Fatalf("frame with %d channels", fr.Count)
			}
			for _, v := range fr.Channels() {
				if v < PPMChannelMin || v > PPMChannelMax {
					t.Fatalf("channel %d µs out of range in %v", v, fr.Channels())
				}
			}
		}
	})
}

func FuzzPWMDecoder(f *testing.F) {
	f.Add([]byte{0x01, 0x00, 0xB8, 0x0B, 0x01, 0x9C, 0xB8, 0x0B}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, channels uint8) {
		d, err := NewPWMDecoder(int(channels%MaxChannels)+1, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []Frame
		d.onFrame = collect(&got)
		for i, e := range edgesFrom(data) {
			d.Edge(int(data[2*i]>>4)%(d.n+1), e)
		}
		for _, fr := range got {
			for _, v := range fr.Channels() {
				if v != 0 && (v < PWMPulseMin || v > PWMPulseMax) {
					t.Fatalf("pulse %d µs out of range in %v", v, fr.Channels())
				}
			}
		}
	})
}
