package link

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
)

// Golden frames computed by hand from the table: little-endian fields,
// CRC-8/MAXIM over TYPE and PAYLOAD.
var golden = []struct {
	name string
	msg  Message
	hex  string
}{
	{"rc_cmd", RCCmd{Throttle: 500, Steer: -250, Flags: FlagArmed}, "aa0501f40106ff010f"},
	{"sensor", Sensor{ToFmm: 1234, BaroDeltaPa: -56, NFCPresent: 1}, "aa0502d204c8ff0114"},
	{"fault", Fault{Flags: FaultRCLoss | FaultEStop}, "aa0103056a"},
	{"state", State{PitchX100: -512, PIDOut: 1500, ErrorState: 2}, "aa051000fedc0502de"},
	{"led_cmd", LEDCmd{Pattern: 2, R: 255, G: 0, B: 16}, "aa041102ff0010f9"},
	{"buzzer", Buzzer{ToneID: 3, DurationMs: 250}, "aa031203fa00a5"},
}

func TestCRC8MaximCheck(t *testing.T) {
	if got := CRC8Maxim([]byte("123456789")); got != 0xA1 {
		t.Fatalf("check = 0x%02x, want 0xa1", got)
	}
}

func TestGoldenEncode(t *testing.T) {
	for _, g := range golden {
		if got := hex.EncodeToString(Append(nil, g.msg)); got != g.hex {
			t.Errorf("%s: %s, want %s", g.name, got, g.hex)
		}
	}
}

func TestGoldenDecode(t *testing.T) {
	var got []Message
	d := NewDecoder(func(m Message) { got = append(got, m) })
	for _, g := range golden {
		b, _ := hex.DecodeString(g.hex)
		d.Feed(b)
	}
	if len(got) != len(golden) {
		t.Fatalf("decoded %d frames, want %d", len(got), len(golden))
	}
	for i, g := range golden {
		if !reflect.DeepEqual(got[i], g.msg) {
			t.Errorf("%s: decoded %+v, want %+v", g.name, got[i], g.msg)
		}
	}
}

func TestByteAtATime(t *testing.T) {
	var got []Message
	d := NewDecoder(func(m Message) { got = append(got, m) })
	for _, g := range golden {
		b, _ := hex.DecodeString(g.hex)
		for _, x := range b {
			d.Feed([]byte{x})
		}
	}
	if len(got) != len(golden) {
		t.Fatalf("decoded %d frames byte by byte, want %d", len(got), len(golden))
	}
}

func TestResyncAfterGarbage(t *testing.T) {
	good := Append(nil, RCCmd{Throttle: -1000, Steer: 1000, Flags: FlagKill})
	// Garbage containing start bytes, a frame with a flipped CRC, a frame
	// cut short by a new one, then a good frame.
	bad := Append(nil, State{PitchX100: 1})
	bad[len(bad)-1] ^= 0xFF
	var line []byte
	line = append(line, 0x00, 0xAA, 0xAA, 0x13, 0xAA, 0xFF)
	line = append(line, bad...)
	line = append(line, good[:4]...)
	line = append(line, good...)
	var got []Message
	d := NewDecoder(func(m Message) { got = append(got, m) })
	d.Feed(line)
	if len(got) != 1 || got[0] != (RCCmd{Throttle: -1000, Steer: 1000, Flags: FlagKill}) {
		t.Fatalf("decoded %+v, want only the good RC_CMD", got)
	}
	st := d.Stats()
	if st.CRCErrors == 0 || st.Discarded == 0 {
		t.Errorf("stats %+v: want CRC errors and discarded bytes counted", st)
	}
}

func TestWrongLengthAndUnknownType(t *testing.T) {
	// A FAULT carrying two bytes and a type the table lacks, both with
	// good checksums: counted, not delivered.
	wrong := []byte{Start, 2, TypeFault, 1, 2, CRC8Maxim([]byte{TypeFault, 1, 2})}
	unknown := []byte{Start, 1, 0x7F, 9, CRC8Maxim([]byte{0x7F, 9})}
	var got []Message
	d := NewDecoder(func(m Message) { got = append(got, m) })
	d.Feed(append(wrong, unknown...))
	d.Feed(Append(nil, Fault{Flags: FaultMotorFault}))
	if len(got) != 1 || got[0] != (Fault{Flags: FaultMotorFault}) {
		t.Fatalf("decoded %+v, want the one good FAULT", got)
	}
	if st := d.Stats(); st.BadLength != 1 || st.Unknown != 1 {
		t.Errorf("stats %+v: want one bad length, one unknown", st)
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	if _, err := Parse(TypeState, []byte{1}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("want 5")) {
		t.Errorf("short STATE: %v", err)
	}
	if _, err := Parse(0x55, nil); err == nil {
		t.Error("unknown type parsed")
	}
}

// FuzzDecoder feeds arbitrary bytes: the decoder never panics, and a good
// frame following any garbage is still decoded.
func FuzzDecoder(f *testing.F) {
	for _, g := range golden {
		b, _ := hex.DecodeString(g.hex)
		f.Add(b)
	}
	f.Add([]byte{0xAA, 0xAA, 0x05, 0x01})
	f.Fuzz(func(t *testing.T, garbage []byte) {
		want := RCCmd{Throttle: 123, Steer: -321, Flags: FlagArmed}
		var got []Message
		d := NewDecoder(func(m Message) { got = append(got, m) })
		d.Feed(garbage)
		// The longest frame garbage can leave pending is MaxPayload+4
		// bytes: pad with non-start bytes so any of it completes or fails.
		d.Feed(bytes.Repeat([]byte{0}, MaxPayload+4))
		got = got[:0]
		d.Feed(Append(nil, want))
		if len(got) != 1 || got[0] != want {
			t.Fatalf("after garbage %x: decoded %+v, want %+v", garbage, got, want)
		}
	})
}
