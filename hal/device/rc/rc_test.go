package rc

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/uart"
)

// Reference vectors: the frames docs/protocols.md shows byte by byte.
const (
	sbusCentreHex = "0fe0031ff8c0073ef0810f7ce0031ff8c0073ef0810f7c0000"
	ibusCentreHex = "2040" + "dc05dc05dc05dc05dc05dc05dc05dc05dc05dc05dc05dc05dc05dc05" + "51f3"
	crsfELRSHex   = "ee1816e1e3de09c7d78a56800f7ce0031ff8c0073ef0810f7c36"
)

// crsfELRSRaw is what the real ExpressLRS frame carries.
var crsfELRSRaw = [16]uint16{993, 988, 1063, 995, 173, 173, 992, 992, 992, 992, 992, 992, 992, 992, 992, 992}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collect returns a callback that appends frames to *got.
func collect(got *[]Frame) func(Frame) {
	return func(f Frame) { *got = append(*got, f) }
}

var t0 = clock.Epoch()

func TestSBUSGolden(t *testing.T) {
	want := mustHex(t, sbusCentreHex)
	var s SBUSFrame
	for i := range s.Raw {
		s.Raw[i] = SBUSRawCenter
	}
	if got := s.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("encode all-992:\n got %x\nwant %x", got, want)
	}
	var frames []Frame
	d := NewSBUSDecoder(collect(&frames))
	d.Feed(want, t0)
	if len(frames) != 1 {
		t.Fatalf("decoded %d frames, want 1 (stats %+v)", len(frames), d.Stats())
	}
	f := frames[0]
	if f.Protocol != SBUS || f.Count != 16 || f.FrameLost || f.Failsafe || f.Ch17 || f.Ch18 || !f.Time.Equal(t0) {
		t.Errorf("frame = %+v", f)
	}
	for i := range 16 {
		if f.Raw[i] != 992 || f.Micros[i] != 1500 {
			t.Errorf("channel %d = raw %d, %d µs; want 992, 1500", i+1, f.Raw[i], f.Micros[i])
		}
	}
}

func TestSBUSFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    SBUSFrame
		flag byte
	}{
		{"ch17", SBUSFrame{Ch17: true}, 0x01},
		{"ch18", SBUSFrame{Ch18: true}, 0x02},
		{"frame lost", SBUSFrame{FrameLost: true}, 0x04},
		{"failsafe", SBUSFrame{Failsafe: true}, 0x08},
		{"all", SBUSFrame{Ch17: true, Ch18: true, FrameLost: true, Failsafe: true}, 0x0F},
	} {
		b := tc.s.Append(nil)
		if b[23] != tc.flag {
			t.Errorf("%s: flags byte %#02x, want %#02x", tc.name, b[23], tc.flag)
		}
		got, err := ParseSBUS(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.s {
			t.Errorf("%s: parsed %+v, want %+v", tc.name, got, tc.s)
		}
	}
}

func TestSBUSFooters(t *testing.T) {
	b := mustHex(t, sbusCentreHex)
	for footer := range 256 {
		b[24] = byte(footer)
		_, err := ParseSBUS(b)
		want := footer == 0x00 || footer == 0x04 || footer == 0x14 || footer == 0x24 || footer == 0x34
		if (err == nil) != want {
			t.Errorf("footer %#02x: err %v, accepted should be %v", footer, err, want)
		}
	}
}

func TestSBUSMicros(t *testing.T) {
	for _, tc := range []struct{ raw, us uint16 }{{172, 988}, {992, 1500}, {1811, 2012}, {0, 880}, {2047, 2159}} {
		if got := SBUSToMicros(tc.raw); got != tc.us {
			t.Errorf("SBUSToMicros(%d) = %d, want %d", tc.raw, got, tc.us)
		}
	}
	for us := uint16(880); us <= 2159; us++ {
		if got := SBUSToMicros(MicrosToSBUS(us)); got != us {
			t.Fatalf("SBUSToMicros(MicrosToSBUS(%d)) = %d", us, got)
		}
	}
	for _, tc := range []struct{ us, raw uint16 }{{988, 172}, {1500, 992}, {2012, 1811}} {
		if got := MicrosToSBUS(tc.us); got != tc.raw {
			t.Errorf("MicrosToSBUS(%d) = %d, want %d", tc.us, got, tc.raw)
		}
	}
	if MicrosToSBUS(0) != 0 || MicrosToSBUS(5000) != 2047 {
		t.Errorf("MicrosToSBUS does not clamp: %d, %d", MicrosToSBUS(0), MicrosToSBUS(5000))
	}
}

func TestPack11RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var v, got [16]uint16
		for i := range v {
			v[i] = uint16(r.IntN(2048))
		}
		var b [22]byte
		pack11(b[:], &v)
		unpack11(b[:], &got)
		if got != v {
			t.Fatalf("unpack11(pack11(%v)) = %v", v, got)
		}
	}
}

func TestIBUSGolden(t *testing.T) {
	want := mustHex(t, ibusCentreHex)
	var s IBUSFrame
	for i := range s.Micros {
		s.Micros[i] = 1500
	}
	if got := s.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("encode all-1500:\n got %x\nwant %x", got, want)
	}
	var frames []Frame
	d := NewIBUSDecoder(collect(&frames))
	d.Feed(want, t0)
	if len(frames) != 1 {
		t.Fatalf("decoded %d frames, want 1 (stats %+v)", len(frames), d.Stats())
	}
	f := frames[0]
	if f.Protocol != IBUS || f.Count != 14 {
		t.Errorf("frame = %+v", f)
	}
	for i, v := range f.Channels() {
		if v != 1500 || f.Raw[i] != 1500 {
			t.Errorf("channel %d = %d µs, raw %d; want 1500", i+1, v, f.Raw[i])
		}
	}
	bad := bytes.Clone(want)
	bad[31] ^= 1
	if _, err := ParseIBUS(bad); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("bad checksum: err = %v", err)
	}
}

func TestCRC8Table(t *testing.T) {
	for i := range 256 {
		crc := byte(i)
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0xD5
			} else {
				crc <<= 1
			}
		}
		if crc8DVBS2Table[i] != crc {
			t.Fatalf("table[%#02x] = %#02x, want %#02x", i, crc8DVBS2Table[i], crc)
		}
	}
}

func TestCRC8DVBS2(t *testing.T) {
	if got := CRC8DVBS2([]byte("123456789")); got != 0xBC {
		t.Errorf("check value = %#02x, want 0xbc", got)
	}
}

func TestCRSFGolden(t *testing.T) {
	want := mustHex(t, crsfELRSHex)
	raw := crsfELRSRaw
	if got := AppendCRSFChannels(nil, CRSFAddrTxModule, &raw); !bytes.Equal(got, want) {
		t.Fatalf("encode:\n got %x\nwant %x", got, want)
	}
	var frames []Frame
	d := NewCRSFDecoder(collect(&frames))
	d.Feed(want, t0)
	if len(frames) != 1 {
		t.Fatalf("decoded %d frames, want 1 (stats %+v)", len(frames), d.Stats())
	}
	f := frames[0]
	if f.Protocol != CRSF || f.Count != 16 || f.HasLink {
		t.Errorf("frame = %+v", f)
	}
	if f.Raw != crsfELRSRaw {
		t.Errorf("raw = %v, want %v", f.Raw, crsfELRSRaw)
	}
	wantUS := [16]uint16{1501, 1498, 1545, 1502, 989, 989}
	for i := 6; i < 16; i++ {
		wantUS[i] = 1500
	}
	if f.Micros != wantUS {
		t.Errorf("µs = %v, want %v", f.Micros, wantUS)
	}
}

func TestCRSFMicros(t *testing.T) {
	for _, tc := range []struct{ raw, us uint16 }{{172, 988}, {992, 1500}, {1811, 2012}, {0, 881}, {2047, 2159}} {
		if got := CRSFToMicros(tc.raw); got != tc.us {
			t.Errorf("CRSFToMicros(%d) = %d, want %d", tc.raw, got, tc.us)
		}
	}
	for _, tc := range []struct{ us, raw uint16 }{{988, 172}, {1500, 992}, {2012, 1811}, {0, 0}, {3000, 2047}} {
		if got := MicrosToCRSF(tc.us); got != tc.raw {
			t.Errorf("MicrosToCRSF(%d) = %d, want %d", tc.us, got, tc.raw)
		}
	}
	for us := uint16(881); us <= 2159; us++ {
		if got := CRSFToMicros(MicrosToCRSF(us)); got != us {
			t.Fatalf("CRSFToMicros(MicrosToCRSF(%d)) = %d", us, got)
		}
	}
}

func TestCRSFLinkStats(t *testing.T) {
	l := LinkStats{UplinkRSSI1: 45, UplinkRSSI2: 70, UplinkLQ: 98, UplinkSNR: -3, ActiveAntenna: 1,
		RFMode: 5, TxPower: 3, DownlinkRSSI: 60, DownlinkLQ: 95, DownlinkSNR: 7}
	b := AppendCRSFLinkStats(nil, CRSFAddrFlightController, &l)
	want := mustHex(t, "c80c14"+"2d4662fd01050"+"33c5f07")
	want = append(want, CRC8DVBS2(want[2:]))
	if !bytes.Equal(b, want) {
		t.Fatalf("link stats frame:\n got %x\nwant %x", b, want)
	}
	if l.RSSIdBm() != -70 || l.TxPowerMilliwatts() != 100 {
		t.Errorf("RSSIdBm %d, TxPowerMilliwatts %d; want -70, 100", l.RSSIdBm(), l.TxPowerMilliwatts())
	}
	var frames []Frame
	d := NewCRSFDecoder(collect(&frames))
	d.Feed(b, t0)
	if got, at, ok := d.Link(); !ok || got != l || !at.Equal(t0) {
		t.Fatalf("Link() = %+v, %v, %v; want %+v", got, at, ok, l)
	}
	if len(frames) != 0 {
		t.Fatalf("link statistics delivered %d channel frames", len(frames))
	}
	raw := crsfELRSRaw
	t1 := t0.Add(4 * time.Millisecond)
	d.Feed(AppendCRSFChannels(nil, CRSFAddrFlightController, &raw), t1)
	if len(frames) != 1 || !frames[0].HasLink || frames[0].Link != l || !frames[0].LinkTime.Equal(t0) {
		t.Fatalf("channel frame after link statistics = %+v", frames)
	}
	if st := d.Stats(); st.Frames != 1 || st.Telemetry != 1 || st.BadFrames != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestCRSFOtherTypes checks that well-formed frames of other types are
// counted, not delivered, and do not disturb the next channel frame; a device
// ping addressed elsewhere (0xEA) is skipped as garbage.
func TestCRSFOtherTypes(t *testing.T) {
	battery, _ := AppendCRSF(nil, CRSFAddrFlightController, 0x08, []byte{0, 0x7B, 0, 0x10, 0, 0, 0, 50})
	ping, _ := AppendCRSF(nil, CRSFAddrRadio, 0x28, []byte{0x00, 0xEA})
	raw := crsfELRSRaw
	stream := append(append(battery, ping...), AppendCRSFChannels(nil, CRSFAddrFlightController, &raw)...)
	var frames []Frame
	d := NewCRSFDecoder(collect(&frames))
	d.Feed(stream, t0)
	if len(frames) != 1 || frames[0].Raw != raw {
		t.Fatalf("frames = %+v", frames)
	}
	if st := d.Stats(); st.Telemetry != 1 {
		t.Errorf("telemetry = %d, want 1 (stats %+v)", st.Telemetry, st)
	}
	if _, err := AppendCRSF(nil, CRSFAddrFlightController, 0x16, make([]byte, 61)); err == nil {
		t.Error("AppendCRSF accepted a 61-byte payload")
	}
}

func TestPortConfig(t *testing.T) {
	for _, tc := range []struct {
		p    Protocol
		want uart.Config
	}{
		{SBUS, uart.Config{Baud: 100000, DataBits: 8, Parity: uart.EvenParity, StopBits: 2, Inverted: true}},
		{IBUS, uart.Config{Baud: 115200, DataBits: 8, Parity: uart.NoParity, StopBits: 1}},
		{CRSF, uart.Config{Baud: 420000, DataBits: 8, Parity: uart.NoParity, StopBits: 1}},
	} {
		got, err := PortConfig(tc.p)
		if err != nil || got != tc.want {
			t.Errorf("PortConfig(%s) = %+v, %v; want %+v", tc.p, got, err, tc.want)
		}
		if !tc.p.Serial() {
			t.Errorf("%s.Serial() = false", tc.p)
		}
		if d, err := NewByteDecoder(tc.p, nil); err != nil || d == nil {
			t.Errorf("NewByteDecoder(%s) = %v, %v", tc.p, d, err)
		}
	}
	for _, p := range []Protocol{PPM, PWM, "dsm"} {
		if _, err := PortConfig(p); err == nil {
			t.Errorf("PortConfig(%s) succeeded", p)
		}
		if _, err := NewByteDecoder(p, nil); err == nil {
			t.Errorf("NewByteDecoder(%s) succeeded", p)
		}
	}
	// SBUS: 12 bits a character, so 120 µs; a frame fits in 3 ms.
	sb, _ := PortConfig(SBUS)
	if bt := byteTime(sb); bt != 120*time.Microsecond {
		t.Errorf("SBUS byte time = %v, want 120µs", bt)
	}
}
