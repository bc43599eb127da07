package livelink

import (
	"bytes"
	"testing"
)

// FuzzParseFacePacket: any datagram either parses to a packet that encodes
// back to the same bytes, or is refused with an error; never a panic.
// Seeds in testdata/fuzz/FuzzParseFacePacket: the capture's first packet,
// a short datagram from its tail, and damaged packets.
func FuzzParseFacePacket(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseFacePacket(b)
		if err != nil {
			return
		}
		if enc := AppendFacePacket(nil, &p); !bytes.Equal(enc, b) {
			t.Fatalf("parsed %+v does not encode back to the datagram", p)
		}
	})
}

// FuzzSplitCapture: segments cover the input in order, good ones parse.
func FuzzSplitCapture(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		off := 0
		for _, s := range SplitCapture(b) {
			if s.Offset != off || len(s.Bytes) == 0 {
				t.Fatalf("segment at %d of %d bytes, want at %d", s.Offset, len(s.Bytes), off)
			}
			off += len(s.Bytes)
			if s.Err == nil {
				if _, err := ParseFacePacket(s.Bytes); err != nil {
					t.Fatalf("good segment does not parse: %v", err)
				}
			}
		}
		if off != len(b) {
			t.Fatalf("segments cover %d of %d bytes", off, len(b))
		}
	})
}

// FuzzDecodeJSONFrame: any line is a checked frame or an error; a frame
// that decodes converts to the router's frame with parallel properties.
// Seeds in testdata/fuzz/FuzzDecodeJSONFrame: one frame of each subject
// type and malformed lines.
func FuzzDecodeJSONFrame(f *testing.F) {
	aliases := arkitAliases()
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeJSONFrame(b)
		if err != nil {
			return
		}
		out := fr.LiveLinkFrame(0, aliases)
		if len(out.PropertyNames) != len(out.PropertyValues) || out.SubjectName == "" {
			t.Fatalf("frame %+v", out)
		}
	})
}

// FuzzDecodeBeacon: never a panic.
func FuzzDecodeBeacon(f *testing.F) {
	f.Add([]byte(`{"saint_livelink":1,"kind":"discover","name":"UE_Editor"}`))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = DecodeBeacon(b) })
}
