package rc

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchSerial feeds a stream of 1000 random frames of p in chunks of chunk
// bytes, stamped as they would arrive back to back at the line's speed, and
// reports decoded frames per second.
func benchSerial(b *testing.B, p Protocol, chunk int) {
	r := rand.New(rand.NewPCG(1, 1))
	const frames = 1000
	var stream []byte
	for range frames {
		f, _ := randomFrame(p, r)
		stream = append(stream, f...)
	}
	n := 0
	d, _ := NewByteDecoder(p, func(Frame) { n++ })
	cfg, _ := PortConfig(p)
	step := time.Duration(chunk) * byteTime(cfg) // back to back at line speed
	at := t0
	b.SetBytes(int64(len(stream)))
	b.ResetTimer()
	for range b.N {
		for off := 0; off < len(stream); off += chunk {
			at = at.Add(step)
			d.Feed(stream[off:min(off+chunk, len(stream))], at)
		}
	}
	b.StopTimer()
	if n != frames*b.N {
		b.Fatalf("decoded %d frames, want %d", n, frames*b.N)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkSBUSDecode(b *testing.B)       { benchSerial(b, SBUS, SBUSFrameLen) }
func BenchmarkSBUSDecodeChunk1(b *testing.B) { benchSerial(b, SBUS, 1) }
func BenchmarkIBUSDecode(b *testing.B)       { benchSerial(b, IBUS, IBUSFrameLen) }
func BenchmarkIBUSDecodeChunk1(b *testing.B) { benchSerial(b, IBUS, 1) }
func BenchmarkCRSFDecode(b *testing.B)       { benchSerial(b, CRSF, 26) }
func BenchmarkCRSFDecodeChunk1(b *testing.B) { benchSerial(b, CRSF, 1) }

func BenchmarkPPMDecode(b *testing.B) {
	edges := ppmStream(1000, []uint16{1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700}, nil)
	span := PPMPeriod * 1000
	n := 0
	d := NewPPMDecoder(nil, func(Frame) { n++ })
	b.ResetTimer()
	for i := range b.N {
		shift := time.Duration(i) * span
		for _, e := range edges {
			e.Time = e.Time.Add(shift)
			d.Edge(e)
		}
	}
	b.StopTimer()
	if n < 1000*b.N-2 { // the first frame waits for a sync, the last for the next
		b.Fatalf("decoded %d frames, want %d", n, 1000*b.N-2)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkPWMDecode(b *testing.B) {
	edges := pwmStream(1000, []uint16{1000, 1250, 1500, 1750, 2000, 1100, 1900, 1500})
	span := PWMPeriod * 1000
	n := 0
	d, _ := NewPWMDecoder(8, 0, func(Frame) { n++ })
	b.ResetTimer()
	for i := range b.N {
		shift := time.Duration(i) * span
		for _, x := range edges {
			x.e.Time = x.e.Time.Add(shift)
			d.Edge(x.ch, x.e)
		}
	}
	b.StopTimer()
	if n != 1000*b.N {
		b.Fatalf("decoded %d frames, want %d", n, 1000*b.N)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}
