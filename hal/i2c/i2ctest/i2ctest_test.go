package i2ctest

import (
	"errors"
	"strings"
	"testing"
)

func TestPlaybackPlaysScript(t *testing.T) {
	nack := errors.New("nack")
	p := &Playback{Ops: []IO{
		{Addr: 0x40, W: []byte{0x00}, R: []byte{0x11}},
		{Addr: 0x40, W: []byte{0x00, 0x20}},
		{Addr: 0x41, W: []byte{0x00}, Err: nack},
	}}
	r := make([]byte, 1)
	if err := p.Tx(0x40, []byte{0x00}, r); err != nil || r[0] != 0x11 {
		t.Fatalf("Tx #0 = %v, r %#x", err, r)
	}
	if err := p.Tx(0x40, []byte{0x00, 0x20}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Tx(0x41, []byte{0x00}, nil); !errors.Is(err, nack) {
		t.Errorf("scripted error: got %v, want %v", err, nack)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after the whole script: %v", err)
	}
	if p.Count() != 3 {
		t.Errorf("Count() = %d, want 3", p.Count())
	}
}

func TestPlaybackCloseFailsOnUnusedScript(t *testing.T) {
	p := &Playback{Ops: []IO{
		{Addr: 0x68, W: []byte{0x75}, R: []byte{0x68}},
		{Addr: 0x68, W: []byte{0x6B, 0x00}},
	}}
	if err := p.Tx(0x68, []byte{0x75}, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	err := p.Close()
	if err == nil {
		t.Fatal("Close succeeded with one transaction left")
	}
	for _, want := range []string{"1 of 2", "[0x6b 0x00]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Close() = %q, want it to mention %q", err, want)
		}
	}
}

func TestPlaybackMismatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		addr    uint16
		w       []byte
		r       int
		mention []string
	}{
		{"addr", 0x69, []byte{0x75}, 1, []string{"want Tx(0x68", "got Tx(0x69"}},
		{"write", 0x68, []byte{0x76}, 1, []string{"w [0x75]", "w [0x76]"}},
		{"read length", 0x68, []byte{0x75}, 2, []string{"r 1 byte(s)", "r 2 byte(s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Playback{Ops: []IO{{Addr: 0x68, W: []byte{0x75}, R: []byte{0x68}}}}
			err := p.Tx(tc.addr, tc.w, make([]byte, tc.r))
			if err == nil {
				t.Fatal("mismatched Tx succeeded")
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if p.Count() != 0 {
				t.Error("a mismatch consumed the op")
			}
			// Even if the driver swallowed the error, Close reports it.
			if cerr := p.Close(); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("Close() = %v, want the mismatch %v", cerr, err)
			}
		})
	}
}

func TestPlaybackBeyondScript(t *testing.T) {
	p := &Playback{}
	err := p.Tx(0x10, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "unexpected Tx(0x10") {
		t.Errorf("Tx on empty script = %v", err)
	}
}

func TestRecordThenPlayback(t *testing.T) {
	dev := &RegMap{Addr: 0x68}
	dev.Regs[0x75] = 0x68
	rec := &Record{Bus: dev}
	id := make([]byte, 1)
	if err := rec.Tx(0x68, []byte{0x75}, id); err != nil || id[0] != 0x68 {
		t.Fatalf("Tx = %v, id %#x", err, id[0])
	}
	if err := rec.Tx(0x68, []byte{0x6B, 0x01}, nil); err != nil {
		t.Fatal(err)
	}
	if err := rec.Tx(0x50, nil, make([]byte, 1)); err == nil {
		t.Fatal("Tx to an empty address succeeded")
	}
	ops := rec.Ops()
	if len(ops) != 3 {
		t.Fatalf("recorded %d ops, want 3", len(ops))
	}
	if ops[2].Err == nil {
		t.Error("failed transaction recorded without its error")
	}
	// The recording replays against the same driver code.
	p := &Playback{Ops: ops}
	if err := p.Tx(0x68, []byte{0x75}, id); err != nil || id[0] != 0x68 {
		t.Fatalf("replay: %v", err)
	}
	_ = p.Tx(0x68, []byte{0x6B, 0x01}, nil)
	if err := p.Tx(0x50, nil, make([]byte, 1)); err == nil {
		t.Error("replayed failure succeeded")
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if dev.Regs[0x6B] != 0x01 {
		t.Errorf("register 0x6B = %#x, want 0x01", dev.Regs[0x6B])
	}
}

func TestRecordWithoutBus(t *testing.T) {
	rec := &Record{}
	if err := rec.Tx(0x3C, []byte{0x00, 0xAF}, nil); err != nil {
		t.Fatal(err)
	}
	if err := rec.Tx(0x3C, nil, make([]byte, 1)); err == nil {
		t.Error("read without a bus succeeded")
	}
}

func TestRegMapAutoIncrement(t *testing.T) {
	dev := &RegMap{Addr: 0x40}
	if err := dev.Tx(0x40, []byte{0xFE, 1, 2}, nil); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 3)
	if err := dev.Tx(0x40, []byte{0xFE}, r); err != nil {
		t.Fatal(err)
	}
	// The pointer wraps from 0xFF to 0x00.
	if r[0] != 1 || r[1] != 2 || r[2] != dev.Regs[0] {
		t.Errorf("read %v", r)
	}
	dev.Err = errors.New("bus stuck")
	if err := dev.Tx(0x40, []byte{0}, nil); err == nil {
		t.Error("Err did not fail the transaction")
	}
}
