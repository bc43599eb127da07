package twin

import (
	"errors"
	"testing"
)

type echo struct{ last []byte }

func (e *echo) Tx(w, r []byte) error {
	if len(w) > 0 && w[0] == 0xEE {
		return errors.New("bad register")
	}
	if len(w) > 0 {
		e.last = append([]byte(nil), w...)
	}
	copy(r, e.last)
	return nil
}

func TestI2CBusRoutesAndNACKs(t *testing.T) {
	b := &I2CBus{Name: "i2c-1"}
	d := &echo{}
	b.Attach(0x68, d)
	if err := b.Tx(0x68, []byte{0x75}, nil); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 1)
	if err := b.Tx(0x68, nil, r); err != nil || r[0] != 0x75 {
		t.Fatalf("read = %v, %#x", err, r[0])
	}
	err := b.Tx(0x50, nil, r)
	var nack *NACKError
	if !errors.As(err, &nack) || nack.Addr != 0x50 || err.Error() != "i2c-1: no device acknowledged address 0x50" {
		t.Errorf("empty address: %v", err)
	}
	if err := b.Tx(0x68, []byte{0xEE}, nil); err == nil || errors.As(err, &nack) {
		t.Errorf("device error = %v, want a non-NACK error", err)
	}
	if !b.Connect(0x68, false) {
		t.Fatal("Connect did not find the device")
	}
	if err := b.Tx(0x68, nil, r); !errors.As(err, &nack) {
		t.Errorf("unplugged device answered: %v", err)
	}
	b.Connect(0x68, true)
	if err := b.Tx(0x68, nil, r); err != nil {
		t.Errorf("replugged device: %v", err)
	}
	if b.Connect(0x10, true) {
		t.Error("Connect found a device at an empty address")
	}
	if got, ok := b.Device(0x68); !ok || got != d {
		t.Error("Device(0x68) did not return the twin")
	}
	b.Attach(0x40, &echo{})
	if a := b.Addrs(); len(a) != 2 || a[0] != 0x40 || a[1] != 0x68 {
		t.Errorf("Addrs() = %v", a)
	}
}

func TestAttachPanicsOnWiringMistakes(t *testing.T) {
	for name, f := range map[string]func(b *I2CBus){
		"twice":  func(b *I2CBus) { b.Attach(0x40, &echo{}); b.Attach(0x40, &echo{}) },
		"10-bit": func(b *I2CBus) { b.Attach(0x80, &echo{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f(&I2CBus{})
		}()
	}
}
