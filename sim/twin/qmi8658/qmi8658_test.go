package qmi8658

import "testing"

func TestIdentify(t *testing.T) {
	d := New()
	r := make([]byte, 3)
	// Without ADDR_AI a burst reads the same register.
	if err := d.Tx([]byte{0x80, 0, 0}, r); err != nil {
		t.Fatal(err)
	}
	if r[1] != 0x05 || r[2] != 0x05 {
		t.Errorf("WHO_AM_I burst without AI = %#x", r)
	}
	// Set ADDR_AI (keeping the big-endian reset bit), then read both ids.
	if err := d.Tx([]byte{RegCtrl1, 0x60}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Tx([]byte{0x80, 0, 0}, r); err != nil {
		t.Fatal(err)
	}
	if r[1] != WhoAmI || r[2] != RevisionID {
		t.Errorf("WHO_AM_I, REVISION_ID = %#x %#x", r[1], r[2])
	}
	// Identification is read-only; a soft reset clears CTRL1.
	_ = d.Tx([]byte{RegWhoAmI, 0xFF}, nil)
	_ = d.Tx([]byte{RegReset, 0xB0}, nil)
	if d.Reg(RegWhoAmI) != WhoAmI || d.Reg(RegCtrl1) != 0x20 {
		t.Errorf("after reset WHO_AM_I %#x CTRL1 %#x", d.Reg(RegWhoAmI), d.Reg(RegCtrl1))
	}
	if err := d.Tx([]byte{0x80, 0}, make([]byte, 1)); err == nil {
		t.Error("mismatched lengths accepted")
	}
}
