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

func TestDataRegistersAndEndianness(t *testing.T) {
	d := New()
	d.Set(Sample{Accel: [3]float64{StandardGravity, 0, 0}, TempC: 25})
	_ = d.Tx([]byte{RegCtrl1, 0x60}, nil) // AI, big-endian
	_ = d.Tx([]byte{RegCtrl2, 0x03}, nil) // ±2 g
	_ = d.Tx([]byte{RegCtrl7, 0x01}, nil) // accel on
	r := make([]byte, 5)
	_ = d.Tx([]byte{0x80 | RegTempL, 0, 0, 0, 0}, r)
	// Big-endian: TEMP_H (25) first, then AX_H of 16384 (0x40).
	if r[1] != 25 || r[2] != 0 || r[3] != 0x40 || r[4] != 0 {
		t.Errorf("big-endian burst = % x", r)
	}
	_ = d.Tx([]byte{RegCtrl1, 0x40}, nil) // little-endian
	_ = d.Tx([]byte{0x80 | RegTempL, 0, 0, 0, 0}, r)
	if r[1] != 0 || r[2] != 25 || r[3] != 0 || r[4] != 0x40 {
		t.Errorf("little-endian burst = % x", r)
	}
	if d.SampleRate() != 1000 {
		t.Errorf("accel-only ODR code 3 = %v Hz, want 1000", d.SampleRate())
	}
}

func TestReservedAndCommands(t *testing.T) {
	d := New()
	_ = d.Tx([]byte{RegCtrl1, 0x40}, nil)
	_ = d.Tx([]byte{0x20, 0xAA, 0xBB}, nil) // reserved
	r := make([]byte, 3)
	_ = d.Tx([]byte{0xA0, 0, 0}, r)
	if r[1] != 0 || r[2] != 0 {
		t.Errorf("reserved registers read % x after writes", r)
	}
	_ = d.Tx([]byte{RegCtrl9, 0x04}, nil) // CTRL_CMD_RST_FIFO
	if d.Reg(RegStatusInt)&0x80 == 0 || d.Reg(RegStatus1)&1 == 0 {
		t.Error("CTRL9 command not reported done")
	}
	_ = d.Tx([]byte{RegCtrl9, 0x00}, nil) // ACK
	if d.Reg(RegStatusInt)&0x80 != 0 {
		t.Error("CmdDone not cleared by the acknowledgement")
	}
}

func FuzzTx(f *testing.F) {
	f.Add([]byte{0x80, 0, 0}, true)
	f.Add([]byte{RegCtrl1, 0x41, 0x13, 0x53}, false)
	f.Add([]byte{RegCtrl7, 0x03}, false)
	f.Add([]byte{0xFF, 1, 2, 3, 4, 5}, true)
	f.Add([]byte{RegReset, 0xB0}, false)
	f.Fuzz(func(t *testing.T, w []byte, read bool) {
		d := New()
		_ = d.Tx([]byte{RegCtrl1, 0x40}, nil)
		var r []byte
		if read {
			r = make([]byte, len(w))
		}
		if err := d.Tx(w, r); err != nil {
			t.Fatal(err)
		}
		if d.Reg(RegWhoAmI) != WhoAmI {
			t.Fatal("WHO_AM_I changed")
		}
	})
}
