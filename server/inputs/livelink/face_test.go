package livelink

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// captureFile is the real Live Link Face capture kept with the fixtures.
var captureFile = filepath.Join("..", "..", "..", "fixtures", "livelink", "live-link-face-capture.udp")

func readCapture(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(captureFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The capture as it was taken: 546 packets of 319 bytes; then seven
// 74-byte datagrams that end after the frame rate (no blend shape count,
// no values); then 14 more packets of 319 bytes. Offsets by hand from the
// field sizes: 1 + 4 + 36 + 4 + 13 + 4·4 + 1 + 61·4 = 319.
const (
	packetSize    = 319
	firstRun      = 546
	shortSize     = 74
	shortCount    = 7
	secondRun     = 14
	deviceID      = "1EACAA6D-D06B-4A50-9463-283791062EB9"
	captureSubj   = "Ahmeds_iPhone"
	firstFrameNum = 1095835
)

func TestCaptureLayout(t *testing.T) {
	b := readCapture(t)
	if want := firstRun*packetSize + shortCount*shortSize + secondRun*packetSize; len(b) != want {
		t.Fatalf("capture is %d bytes, want %d", len(b), want)
	}
}

// TestFirstPacketByHand decodes the first packet from fixed offsets and
// compares with the parser.
func TestFirstPacketByHand(t *testing.T) {
	b := readCapture(t)[:packetSize]
	be := binary.BigEndian
	f32 := func(off int) float32 { return math.Float32frombits(be.Uint32(b[off:])) }
	if b[0] != 6 || be.Uint32(b[1:]) != 36 || string(b[5:41]) != deviceID || be.Uint32(b[41:]) != 13 || string(b[45:58]) != captureSubj {
		t.Fatalf("header bytes are not what the capture's documentation says: % x", b[:58])
	}
	wantFrame := int32(be.Uint32(b[58:]))
	wantSub := f32(62)
	if wantFrame != firstFrameNum || be.Uint32(b[66:]) != 60 || be.Uint32(b[70:]) != 1 || b[74] != 61 {
		t.Fatalf("frame time bytes: % x", b[58:75])
	}
	p, err := ParseFacePacket(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 6 || p.DeviceID != deviceID || p.Subject != captureSubj || p.FrameNumber != wantFrame ||
		p.SubFrame != wantSub || p.RateNumerator != 60 || p.RateDenominator != 1 {
		t.Fatalf("parsed %+v", p)
	}
	for i := 0; i < FaceBlendShapeCount; i++ {
		if got, want := p.Values[i], f32(75+4*i); got != want {
			t.Errorf("value %d (%s) = %v, want %v", i, faceBlendShapeNames[i], got, want)
		}
	}
	// The head rotation the capture's notes give: ≈ −0.017, 0.221, −0.034.
	for name, want := range map[string]float64{"HeadYaw": -0.017, "headPitch": 0.221, "HeadRoll": -0.034} {
		v, ok := p.Value(name)
		if !ok || math.Abs(float64(v)-want) > 0.0005 {
			t.Errorf("%s = %v (%v), want ≈ %v", name, v, ok, want)
		}
	}
	if yaw, _ := p.Value("HeadYaw"); yaw != f32(75+4*52) {
		t.Errorf("HeadYaw is not value 52")
	}
}

func TestSplitCapture(t *testing.T) {
	b := readCapture(t)
	segs := SplitCapture(b)
	var good []CaptureSegment
	var rejected []CaptureSegment
	covered := 0
	for _, s := range segs {
		if s.Offset != covered {
			t.Fatalf("segment at %d, want %d: segments must cover the file in order", s.Offset, covered)
		}
		covered += len(s.Bytes)
		if s.Err != nil {
			rejected = append(rejected, s)
		} else {
			good = append(good, s)
		}
	}
	if covered != len(b) {
		t.Fatalf("segments cover %d of %d bytes", covered, len(b))
	}
	if len(good) != firstRun+secondRun {
		t.Fatalf("%d good packets, want %d", len(good), firstRun+secondRun)
	}
	if len(rejected) != 1 || rejected[0].Offset != firstRun*packetSize || len(rejected[0].Bytes) != shortCount*shortSize {
		t.Fatalf("rejected %d stretches (first %+v), want one of %d bytes at %d", len(rejected), rejected, shortCount*shortSize, firstRun*packetSize)
	}
	var fe *FieldError
	if !errors.As(rejected[0].Err, &fe) || fe.Field != "blend_shape_count" {
		t.Errorf("rejected because %v, want the blend shape count named", rejected[0].Err)
	}
	prev := int32(firstFrameNum - 1)
	for i, s := range good {
		p := s.Packet
		if len(s.Bytes) != packetSize || p.Subject != captureSubj || p.DeviceID != deviceID || p.Rate() != 60 {
			t.Fatalf("packet %d: %d bytes, %+v", i, len(s.Bytes), p)
		}
		if p.FrameNumber <= prev {
			t.Fatalf("packet %d: frame %d after %d, want increasing", i, p.FrameNumber, prev)
		}
		prev = p.FrameNumber
		// Independent check of one value per packet from its offset.
		if want := math.Float32frombits(binary.BigEndian.Uint32(s.Bytes[75+4*17:])); p.Values[17] != want {
			t.Fatalf("packet %d JawOpen %v, want %v", i, p.Values[17], want)
		}
		// The encoder writes the same bytes back.
		if enc := AppendFacePacket(nil, &p); string(enc) != string(s.Bytes) {
			t.Fatalf("packet %d does not re-encode to its bytes", i)
		}
	}
	if good[0].Packet.FrameNumber != firstFrameNum {
		t.Errorf("first frame %d", good[0].Packet.FrameNumber)
	}
	// The short datagrams one by one, as the UDP receiver sees them.
	for k := 0; k < shortCount; k++ {
		d := rejected[0].Bytes[k*shortSize : (k+1)*shortSize]
		_, err := ParseFacePacket(d)
		if !errors.As(err, &fe) || fe.Field != "blend_shape_count" || !errors.Is(err, ErrShortPacket) {
			t.Errorf("short datagram %d: %v, want the blend shape count missing", k, err)
		}
	}
}

func TestParseFacePacketRejects(t *testing.T) {
	good := readCapture(t)[:packetSize]
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	nan := math.Float32bits(float32(math.NaN()))
	for _, tc := range []struct {
		name, field string
		b           []byte
	}{
		{"empty", "version", nil},
		{"version 5", "version", mod(func(b []byte) []byte { b[0] = 5; return b })},
		{"device id length too long", "device_id_length", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[1:], 1000); return b })},
		{"device id length negative", "device_id_length", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[1:], 0xffffffff); return b })},
		{"subject not UTF-8", "subject_name", mod(func(b []byte) []byte { b[45] = 0xff; return b })},
		{"rate 0", "frame_rate", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[66:], 0); return b })},
		{"count 60", "blend_shape_count", mod(func(b []byte) []byte { b[74] = 60; return b })},
		{"NaN HeadYaw", "HeadYaw", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[75+4*52:], nan); return b })},
		{"one byte short", "RightEyeRoll", good[:packetSize-1]},
		{"one byte long", "length", append(append([]byte(nil), good...), 0)},
	} {
		_, err := ParseFacePacket(tc.b)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
}

func TestFaceFrameBothSpellings(t *testing.T) {
	p, err := ParseFacePacket(readCapture(t)[:packetSize])
	if err != nil {
		t.Fatal(err)
	}
	f := FaceFrame(&p, 12.5)
	if f.SubjectName != captureSubj || f.SubjectType != "face" || f.FrameNumber != firstFrameNum || f.Timestamp != 12.5 {
		t.Fatalf("frame %+v", f)
	}
	for _, n := range []string{"HeadYaw", "headYaw", "JawOpen", "jawOpen", "eyeLookUpLeft", "RightEyeRoll", "rightEyeRoll"} {
		v, ok := f.Property(n)
		w, _ := p.Value(n)
		if !ok || v != w {
			t.Errorf("%s = %v (%v), want %v", n, v, ok, w)
		}
	}
	if got := canonicalProperties(f.PropertyNames, arkitAliases()); len(got) != FaceBlendShapeCount || got[52] != "HeadYaw" {
		t.Errorf("canonical properties %v", got)
	}
}
