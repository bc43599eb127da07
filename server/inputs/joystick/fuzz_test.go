package joystick

import (
	"bytes"
	"testing"
)

// FuzzDecoder: any byte stream cut anywhere gives one event per 8 bytes,
// and writing the events back gives the stream.
func FuzzDecoder(f *testing.F) {
	f.Add(AppendEvent(AppendEvent(nil, Event{Type: TypeAxis | TypeInit}), Event{TimeMs: 9, Value: -1, Type: TypeButton, Number: 11}), uint8(3))
	f.Add([]byte{0x04, 0x03, 0x02, 0x01, 0xC7, 0xCF, 0x02, 0x03, 0xFF}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var d Decoder
		c := int(cut) % (len(data) + 1)
		evs := d.Feed(nil, data[:c])
		evs = d.Feed(evs, data[c:])
		if len(evs) != len(data)/EventSize {
			t.Fatalf("%d events from %d bytes", len(evs), len(data))
		}
		var back []byte
		for _, e := range evs {
			back = AppendEvent(back, e)
			if n := Normalize(e.Value); n < -1 || n > 1 {
				t.Fatalf("value %d normalised to %v", e.Value, n)
			}
		}
		if !bytes.Equal(back, data[:len(back)]) {
			t.Fatalf("re-encoded % x, want % x", back, data[:len(back)])
		}
	})
}
