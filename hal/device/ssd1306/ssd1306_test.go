package ssd1306_test

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/saint-os/saint/hal/device/ssd1306"
	"github.com/saint-os/saint/hal/i2c/i2ctest"
	"github.com/saint-os/saint/sim/twin"
	twinoled "github.com/saint-os/saint/sim/twin/ssd1306"
)

// The datasheet's initialisation flow for a 128×64 module, then the first
// flush of a dark frame: window over all 8 pages, 1024 bytes of data.
func initScript() []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: 0x3C, W: []byte{0x00,
			0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14,
			0x20, 0x00, 0xA1, 0xC8, 0xDA, 0x12, 0x81, 0xCF, 0xD9, 0xF1,
			0xDB, 0x40, 0xA4, 0xA6, 0x2E, 0xAF}},
		{Addr: 0x3C, W: []byte{0x00, 0x21, 0x00, 0x7F, 0x22, 0x00, 0x07}},
		{Addr: 0x3C, W: append([]byte{0x40}, make([]byte, 1024)...)},
	}
}

func TestInitAndFlushPlayback(t *testing.T) {
	page2 := make([]byte, 128)
	page2[10] = 0x04 // (10, 18)
	ops := append(initScript(),
		i2ctest.IO{Addr: 0x3C, W: []byte{0x00, 0x21, 0x00, 0x7F, 0x22, 0x02, 0x02}},
		i2ctest.IO{Addr: 0x3C, W: append([]byte{0x40}, page2...)},
		i2ctest.IO{Addr: 0x3C, W: []byte{0x00, 0x81, 0x10}},
		i2ctest.IO{Addr: 0x3C, W: []byte{0x00, 0xA7}},
		i2ctest.IO{Addr: 0x3C, W: []byte{0x00, 0xAE}},
	)
	bus := &i2ctest.Playback{Ops: ops}
	d, err := ssd1306.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Frame().SetPixel(10, 18, true)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil { // nothing changed: nothing sent
		t.Fatal(err)
	}
	if err := d.SetContrast(0x10); err != nil {
		t.Fatal(err)
	}
	if err := d.Invert(true); err != nil {
		t.Fatal(err)
	}
	if err := d.Display(false); err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestChunkedAnd128x32(t *testing.T) {
	rec := &i2ctest.Record{}
	if _, err := ssd1306.New(rec, &ssd1306.Opts{Height: 32, MaxTxBytes: 32, Rotated: true}); err != nil {
		t.Fatal(err)
	}
	ops := rec.Ops()
	init := ops[0].W
	if init[5] != 0x1F || init[16] != 0x02 || init[13] != 0xA0 || init[14] != 0xC0 {
		t.Errorf("128×32 rotated init = % x", init)
	}
	// 4 pages × 128 bytes in 32-byte chunks: 16 data transactions.
	if n := len(ops) - 2; n != 16 {
		t.Errorf("%d data transactions, want 16", n)
	}
	for _, op := range ops[2:] {
		if op.W[0] != 0x40 || len(op.W) != 33 {
			t.Fatalf("data transaction % x", op.W[:4])
		}
	}
	for _, o := range []ssd1306.Opts{{Height: 48}, {MaxTxBytes: -1}} {
		if _, err := ssd1306.New(&i2ctest.Record{}, &o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestDrawing(t *testing.T) {
	f := ssd1306.NewFrame(128, 64)
	f.Line(0, 0, 10, 5, true)
	if !f.Pixel(0, 0) || !f.Pixel(10, 5) || f.Pixel(10, 0) {
		t.Error("line ends wrong")
	}
	lit := 0
	for x := 0; x <= 10; x++ {
		for y := 0; y <= 5; y++ {
			if f.Pixel(x, y) {
				lit++
			}
		}
	}
	if lit != 11 {
		t.Errorf("a line 11 pixels wide lit %d pixels, want 11", lit)
	}
	f.Clear()
	f.Rect(image.Rect(2, 2, 6, 5), true)
	for _, p := range []image.Point{{2, 2}, {5, 2}, {2, 4}, {5, 4}} {
		if !f.Pixel(p.X, p.Y) {
			t.Errorf("rect corner %v dark", p)
		}
	}
	if f.Pixel(3, 3) {
		t.Error("rect outline filled")
	}
	f.FillRect(image.Rect(100, 60, 200, 200), true) // clipped
	if !f.Pixel(127, 63) || f.Pixel(99, 63) {
		t.Error("FillRect clipped wrong")
	}
	f.SetPixel(-1, 500, true) // ignored
	f.Clear()
	end := f.Text(0, 0, "Hi!")
	if end != 18 || ssd1306.TextWidth("Hi!") != 18 {
		t.Errorf("Text advanced to %d", end)
	}
	// 'H': the first column is a full 7-pixel bar; the blank column after
	// the glyph is dark.
	for y := 0; y < 7; y++ {
		if !f.Pixel(0, y) {
			t.Errorf("H column 0 row %d dark", y)
		}
	}
	if f.Pixel(5, 3) || f.Pixel(0, 7) {
		t.Error("spacing column or row lit")
	}
	// '!' is a bar in its middle column with a gap above the dot.
	if !f.Pixel(14, 0) || f.Pixel(14, 5) || !f.Pixel(14, 6) {
		t.Error("'!' drawn wrong")
	}
}

func TestNACK(t *testing.T) {
	_, err := ssd1306.New(&twin.I2CBus{}, nil)
	var nack *twin.NACKError
	if !errors.As(err, &nack) || !strings.Contains(err.Error(), "0x3c") {
		t.Errorf("New on an empty bus = %v", err)
	}
}

// What the driver draws is what the twin's panel shows, pixel for pixel.
func TestAgainstTwin(t *testing.T) {
	chip := twinoled.New()
	bus := &twin.I2CBus{}
	bus.Attach(0x3C, chip)
	d, err := ssd1306.New(bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := d.Frame()
	f.Text(4, 4, "SAINT.OS 12.3V")
	f.Rect(image.Rect(0, 0, 128, 64), true)
	f.Line(0, 63, 127, 20, true)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if !chip.Lit() {
		t.Fatal("panel dark after init")
	}
	img := chip.Image()
	for y := 0; y < 64; y++ {
		for x := 0; x < 128; x++ {
			if want := f.Pixel(x, y); (img.GrayAt(x, y).Y != 0) != want {
				t.Fatalf("panel (%d, %d) lit %v, frame %v", x, y, !want, want)
			}
		}
	}
	if !bytes.Equal(chip.Framebuffer(), f.Bytes()) {
		t.Error("display RAM differs from the frame")
	}
	var buf bytes.Buffer
	if err := chip.WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	if p, err := png.Decode(&buf); err != nil || p.Bounds().Dx() != 128 {
		t.Errorf("PNG: %v", err)
	}
	// Rotated mounting: the same frame shows upside down on a module
	// mounted the usual way, as on the real panel.
	chip2 := twinoled.New()
	bus2 := &twin.I2CBus{}
	bus2.Attach(0x3C, chip2)
	d2, _ := ssd1306.New(bus2, &ssd1306.Opts{Rotated: true})
	d2.Frame().SetPixel(0, 0, true)
	_ = d2.Flush()
	if chip2.Image().GrayAt(127, 63).Y == 0 || chip2.Image().GrayAt(0, 0).Y != 0 {
		t.Error("rotated frame not shown turned by 180°")
	}
}

func BenchmarkFlushFullFrameThroughTwin(b *testing.B) {
	chip := twinoled.New()
	bus := &twin.I2CBus{}
	bus.Attach(0x3C, chip)
	d, err := ssd1306.New(bus, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	on := false
	for b.Loop() {
		on = !on
		d.Frame().Fill(on)
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
