package ssd1306

import (
	"testing"

	"github.com/saint-os/saint/sim/twin"
)

var _ twin.I2C = (*Device)(nil)

func TestInitSequenceAndFrame(t *testing.T) {
	d := New()
	// A typical driver init, sent as one command stream.
	init := []byte{0x00,
		0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14,
		0x20, 0x00, 0xA1, 0xC8, 0xDA, 0x12, 0x81, 0xCF, 0xD9, 0xF1,
		0xDB, 0x40, 0xA4, 0xA6, 0xAF,
	}
	if err := d.Tx(init, nil); err != nil {
		t.Fatal(err)
	}
	if !d.On() || d.Contrast() != 0xCF {
		t.Fatalf("after init: on %v contrast %#x", d.On(), d.Contrast())
	}
	// Whole frame in horizontal mode: columns 0–127, pages 0–7.
	if err := d.Tx([]byte{0x00, 0x21, 0, 127, 0x22, 0, 7}, nil); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 1+Width*Pages)
	frame[0] = 0x40
	frame[1] = 0x01               // (0,0)
	frame[1+Width+5] = 0x80       // page 1, column 5, bit 7: (5, 15)
	frame[1+Width*Pages-1] = 0x80 // (127, 63)
	if err := d.Tx(frame, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		x, y int
		lit  bool
	}{{0, 0, true}, {1, 0, false}, {5, 15, true}, {5, 14, false}, {127, 63, true}, {128, 0, false}} {
		if got := d.Pixel(p.x, p.y); got != p.lit {
			t.Errorf("Pixel(%d, %d) = %v, want %v", p.x, p.y, got, p.lit)
		}
	}
	status := make([]byte, 1)
	_ = d.Tx(nil, status)
	if status[0]&0x40 != 0 {
		t.Error("status says off while on")
	}
}

func TestPageModeAndControlBytes(t *testing.T) {
	d := New()
	// Co=1 pairs: command 0xB2 (page 2), 0x03 and 0x11 (column 0x13), then
	// a data stream.
	if err := d.Tx([]byte{0x80, 0xB2, 0x80, 0x03, 0x80, 0x11, 0x40, 0xFF, 0x0F}, nil); err != nil {
		t.Fatal(err)
	}
	ram := d.RAM()
	if ram[2][0x13] != 0xFF || ram[2][0x14] != 0x0F {
		t.Errorf("page 2 columns 0x13–0x14 = %#x %#x", ram[2][0x13], ram[2][0x14])
	}
	// Page mode wraps the column within the page.
	d2 := New()
	_ = d2.Tx([]byte{0x00, 0xB7, 0x0F, 0x17}, nil) // page 7, column 127
	_ = d2.Tx([]byte{0x40, 1, 2}, nil)
	if r := d2.RAM(); r[7][127] != 1 || r[7][0] != 2 {
		t.Errorf("wrap: %d %d", r[7][127], r[7][0])
	}
	// An argument split across transactions is still an argument.
	_ = d2.Tx([]byte{0x00, 0x81}, nil)
	_ = d2.Tx([]byte{0x00, 0xAF}, nil)
	if d2.Contrast() != 0xAF || d2.On() {
		t.Errorf("split argument: contrast %#x on %v", d2.Contrast(), d2.On())
	}
}

func TestVerticalMode(t *testing.T) {
	d := New()
	// A 2×2 window: columns 10–11, pages 6–7; the fifth byte wraps to the
	// window's start.
	_ = d.Tx([]byte{0x00, 0x20, 0x01, 0x21, 10, 11, 0x22, 6, 7}, nil)
	_ = d.Tx([]byte{0x40, 1, 2, 3, 4, 5}, nil)
	r := d.RAM()
	if r[6][10] != 5 || r[7][10] != 2 || r[6][11] != 3 || r[7][11] != 4 {
		t.Errorf("vertical fill: %v %v %v %v, want 5 2 3 4", r[6][10], r[7][10], r[6][11], r[7][11])
	}
}

func TestImageFollowsTheCommands(t *testing.T) {
	d := New()
	_ = d.Tx([]byte{0x00, 0x8D, 0x14, 0xAF, 0x20, 0x00, 0xA1, 0xC8}, nil)
	_ = d.Tx([]byte{0x40, 0x01}, nil) // page 0 col 0: (0, 0)
	if d.Image().GrayAt(0, 0).Y != 0xFF {
		t.Error("(0, 0) dark with remap and COM scan down")
	}
	_ = d.Tx([]byte{0x00, 0xA7}, nil)
	if d.Image().GrayAt(0, 0).Y != 0 || d.Image().GrayAt(1, 0).Y != 0xFF {
		t.Error("inversion not shown")
	}
	_ = d.Tx([]byte{0x00, 0xA6, 0xA0, 0xC0}, nil)
	if d.Image().GrayAt(127, 63).Y != 0xFF {
		t.Error("without remap and scan the picture is not turned")
	}
	_ = d.Tx([]byte{0x00, 0xA5}, nil)
	if d.Image().GrayAt(50, 30).Y != 0xFF {
		t.Error("entire display on not shown")
	}
	_ = d.Tx([]byte{0x00, 0x8D, 0x10}, nil) // charge pump off
	if d.Lit() || d.Image().GrayAt(50, 30).Y != 0 {
		t.Error("panel lit without its charge pump")
	}
}

func FuzzTx(f *testing.F) {
	f.Add([]byte{0x00, 0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xAF}, uint8(1))
	f.Add([]byte{0x00, 0x21, 0xFF, 0xFF, 0x22, 0xFF, 0xFF, 0x40, 1, 2, 3}, uint8(0))
	f.Add([]byte{0x80, 0x29, 0x80}, uint8(0))
	f.Add([]byte{0x40, 0xFF, 0xFF, 0xFF, 0xFF}, uint8(3))
	f.Add([]byte{0x00, 0x20, 0x01, 0x21, 0x7F, 0x00}, uint8(0))
	f.Fuzz(func(t *testing.T, w []byte, n uint8) {
		d := New()
		if err := d.Tx(w, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		// Then a full frame of data, which must land in RAM without panic.
		_ = d.Tx(append([]byte{0x40}, make([]byte, 2000)...), nil)
		_ = d.Image()
	})
}
