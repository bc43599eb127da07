package mitmotor

import (
	"math"
	"testing"

	"github.com/saint-os/saint/hal/can"
)

// FuzzDecodeReply feeds arbitrary frames to the reply decoder: it never
// panics, refuses what is not a 6–8 byte standard data frame, decodes every
// other one into values inside the model's ranges, and re-encoding them
// gives the same bytes back (within one step of truncation).
func FuzzDecodeReply(f *testing.F) {
	f.Add(uint32(0), false, false, uint8(6), []byte{3, 0x80, 0, 0x80, 0x09, 0x99})
	f.Add(uint32(0), false, false, uint8(8), []byte{3, 0xff, 0xff, 0xff, 0xff, 0xff, 0x41, 2})
	f.Add(uint32(0x7ff), true, false, uint8(9), []byte{})
	f.Fuzz(func(t *testing.T, id uint32, ext, remote bool, n uint8, data []byte) {
		fr := can.Frame{ID: id, Extended: ext, Remote: remote, Length: n}
		copy(fr.Data[:], data)
		for _, m := range Models() {
			r, err := m.DecodeReply(fr)
			valid := !ext && !remote && n >= 6 && n <= 8
			if (err == nil) != valid {
				t.Fatalf("%s: DecodeReply(%+v) error %v, valid %v", m.Name, fr, err, valid)
			}
			if err != nil {
				continue
			}
			for _, x := range []struct {
				v float64
				r Range
			}{{r.Position, m.Position}, {r.Velocity, m.Velocity}, {r.Torque, m.Torque}} {
				if math.IsNaN(x.v) || x.v < x.r.Min-1e-9 || x.v > x.r.Max+1e-9 {
					t.Fatalf("%s: %v outside %v", m.Name, x.v, x.r)
				}
			}
			back := m.ReplyFrame(id, r)
			if back.Data[0] != fr.Data[0] || (n == 8) != (back.Length == 8) {
				t.Fatalf("%s: %+v re-encoded as %+v", m.Name, fr, back)
			}
			near := func(a, b uint32) bool { return a == b || a+1 == b || b+1 == a }
			get := func(d [8]byte) (p, v, tq uint32) {
				return uint32(d[1])<<8 | uint32(d[2]), uint32(d[3])<<4 | uint32(d[4])>>4, uint32(d[4]&0xF)<<8 | uint32(d[5])
			}
			p0, v0, t0 := get(fr.Data)
			p1, v1, t1 := get(back.Data)
			if !near(p0, p1) || !near(v0, v1) || !near(t0, t1) {
				t.Fatalf("%s: fields %d %d %d re-encoded as %d %d %d", m.Name, p0, v0, t0, p1, v1, t1)
			}
		}
	})
}

// FuzzDecodeCommand: any 8-byte frame that is not special decodes into a
// command inside the ranges, which encodes again within one step.
func FuzzDecodeCommand(f *testing.F) {
	f.Add([]byte{0x7f, 0xff, 0x7f, 0xf0, 0, 0, 0x07, 0xff})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := can.Frame{ID: 1, Length: 8}
		copy(fr.Data[:], data)
		_, special := Special(fr)
		for _, m := range Models() {
			c, err := m.DecodeCommand(fr)
			if (err != nil) != special {
				t.Fatalf("%s: DecodeCommand(%x) = %v, special %v", m.Name, fr.Data, err, special)
			}
			if special {
				continue
			}
			back, err := m.EncodeCommand(1, c)
			if err != nil {
				t.Fatalf("%s: a decoded command does not encode: %v", m.Name, err)
			}
			c2, _ := m.DecodeCommand(back)
			step := (m.Kp.Max - m.Kp.Min) / 4095
			if math.Abs(c2.Kp-c.Kp) > step*1.0001 {
				t.Fatalf("%s: kp %v re-encoded as %v", m.Name, c.Kp, c2.Kp)
			}
		}
	})
}
