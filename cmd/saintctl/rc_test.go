package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/serial/serialtest"
)

// TestRCSend runs "saintctl rc send" against a pseudo-terminal and decodes
// what arrives at the other end with the protocol's decoder.
func TestRCSend(t *testing.T) {
	for _, proto := range []string{"sbus", "ibus", "crsf"} {
		t.Run(proto, func(t *testing.T) {
			master, slave := serialtest.OpenPTY(t)
			var out bytes.Buffer
			if err := run([]string{"rc", "send", "--device", slave, "--protocol", proto,
				"--ch", "1000,2000,1250", "--rate", "200", "--count", "12", "--rssi", "-61", "--lq", "88"}, &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "sent 12 "+proto+" frames") {
				t.Errorf("output %q", out.String())
			}
			var frames []wire.Frame
			dec, err := wire.NewByteDecoder(wire.Protocol(proto), func(f wire.Frame) { frames = append(frames, f) })
			if err != nil {
				t.Fatal(err)
			}
			_ = master.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 4096)
			for len(frames) < 12 {
				n, err := master.Read(buf)
				if err != nil && err != io.EOF {
					t.Fatalf("after %d frames: %v", len(frames), err)
				}
				dec.Feed(buf[:n], time.Unix(0, 0))
			}
			if len(frames) != 12 {
				t.Fatalf("%d frames decoded, want 12", len(frames))
			}
			f := frames[len(frames)-1]
			want := []uint16{1000, 2000, 1250, 1500}
			for i, w := range want {
				// SBUS and CRSF carry µs in 11-bit steps of about 0.6 µs.
				if d := int(f.Micros[i]) - int(w); d < -1 || d > 1 {
					t.Errorf("channel %d: %d µs, want %d", i+1, f.Micros[i], w)
				}
			}
			if proto == "crsf" && (!f.HasLink || f.Link.RSSIdBm() != -61 || f.Link.UplinkLQ != 88) {
				t.Errorf("link statistics %+v (present %v), want -61 dBm 88%%", f.Link, f.HasLink)
			}
			if s := dec.Stats(); s.BadFrames != 0 || s.Discarded != 0 {
				t.Errorf("decoder stats %+v, want every byte in a good frame", s)
			}
		})
	}
}

func TestRCSendRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"rc"},
		{"rc", "send", "--protocol", "sbus", "--ch", "1500"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "ppm", "--ch", "1500"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "sbus"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "sbus", "--ch", "1500,abc"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "sbus", "--ch", "3000"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "ibus", "--ch", strings.Repeat("1500,", 14) + "1500"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "sbus", "--ch", "1500", "--rate", "-1"},
		{"rc", "send", "--device", "/dev/null", "--protocol", "ibus", "--ch", "1500", "--inverted"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
