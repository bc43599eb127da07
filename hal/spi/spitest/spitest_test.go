package spitest

import (
	"errors"
	"strings"
	"testing"
)

// whoAmI reads QMI8658 register 0x00 the way a driver does: the read bit
// set in the address byte, one dummy byte clocked out for the answer.
var whoAmI = IO{W: []byte{0x80, 0x00}, R: []byte{0x00, 0x05}}

func TestPlayback(t *testing.T) {
	p := &Playback{Ops: []IO{whoAmI, {W: []byte{0x02, 0x60}, R: []byte{0, 0}}}}
	r := make([]byte, 2)
	if err := p.Tx([]byte{0x80, 0x00}, r); err != nil || r[1] != 0x05 {
		t.Fatalf("Tx = %v, r %v", err, r)
	}
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Errorf("Close with a transfer left = %v", err)
	}
	if err := p.Tx([]byte{0x02, 0x60}, r); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after the whole script: %v", err)
	}
}

func TestPlaybackMismatch(t *testing.T) {
	p := &Playback{Ops: []IO{whoAmI}}
	err := p.Tx([]byte{0x81, 0x00}, make([]byte, 2))
	if err == nil {
		t.Fatal("mismatched Tx succeeded")
	}
	for _, m := range []string{"want Tx(w [0x80 0x00]", "got Tx(w [0x81 0x00]"} {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
	if err := p.Tx([]byte{0x80, 0x00}, make([]byte, 3)); err == nil {
		t.Error("wrong read length accepted")
	}
	if cerr := p.Close(); cerr == nil || cerr.Error() != err.Error() {
		t.Errorf("Close() = %v, want the first mismatch %v", cerr, err)
	}
	if err := (&Playback{}).Tx(nil, nil); err == nil {
		t.Error("Tx beyond the script succeeded")
	}
}

type echo struct{}

func (echo) Tx(w, r []byte) error {
	copy(r, w)
	if len(w) > 0 && w[0] == 0xFF {
		return errors.New("busy")
	}
	return nil
}

func TestRecord(t *testing.T) {
	rec := &Record{Conn: echo{}}
	r := make([]byte, 2)
	if err := rec.Tx([]byte{1, 2}, r); err != nil {
		t.Fatal(err)
	}
	if err := rec.Tx([]byte{0xFF}, make([]byte, 1)); err == nil {
		t.Fatal("error from the connection was lost")
	}
	ops := rec.Ops()
	if len(ops) != 2 || ops[0].R[1] != 2 || ops[1].Err == nil {
		t.Errorf("Ops() = %v", ops)
	}
	p := &Playback{Ops: ops}
	_ = p.Tx([]byte{1, 2}, r)
	if err := p.Tx([]byte{0xFF}, make([]byte, 1)); err == nil {
		t.Error("replayed error lost")
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if err := (&Record{}).Tx([]byte{1}, make([]byte, 1)); err == nil {
		t.Error("Record without Conn read")
	}
}
