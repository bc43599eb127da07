package feetech

import (
	"bytes"
	"testing"
)

// FuzzParser feeds arbitrary bytes, split at an arbitrary point: the parser
// must never panic, and every packet it yields must be a valid packet that
// occurs in the input.
func FuzzParser(f *testing.F) {
	f.Add(h("FF FF 01 02 01 FB"), 3)
	f.Add(h("00 FF FF FF 01 04 00 00 08 F2 13"), 1)
	f.Add(h("FF FF 01 02 00 FD FF FF 01 02 00 FC"), 7)
	f.Add(h("FF FF 01 00 FF FF 01 01"), 0)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		if split < 0 || split > len(in) {
			split = len(in) / 2
		}
		var ps Parser
		check := func(p Packet) {
			enc := p.Encode()
			if !bytes.Contains(in, enc) {
				t.Fatalf("packet % X is not in the input % X", enc, in)
			}
		}
		ps.Feed(in[:split], check)
		ps.Feed(in[split:], check)
		if len(ps.buf) > 4+255 {
			t.Fatalf("parser holds %d bytes, more than one packet", len(ps.buf))
		}
	})
}
