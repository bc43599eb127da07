package livelink

import "testing"

func BenchmarkParseFacePacket(b *testing.B) {
	pkt := readCapture(b)[:packetSize]
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if _, err := ParseFacePacket(pkt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFaceFrame(b *testing.B) {
	p, err := ParseFacePacket(readCapture(b)[:packetSize])
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = FaceFrame(&p, 0)
	}
}

func BenchmarkDecodeJSONFrame(b *testing.B) {
	line := []byte(`{"v":1,"subject":"FaceCapture","type":"face","frame":42,"names":["jawOpen","headYaw","headPitch","headRoll"],"values":[0.25,-0.5,0.1,0]}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := DecodeJSONFrame(line); err != nil {
			b.Fatal(err)
		}
	}
}
