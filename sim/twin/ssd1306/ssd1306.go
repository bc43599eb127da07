package ssd1306

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"sync"
)

// Display size.
const (
	Width  = 128
	Height = 64
	Pages  = Height / 8
)

// Memory addressing modes (command 0x20).
const (
	Horizontal = 0
	Vertical   = 1
	PageMode   = 2
)

const (
	ctrlCo = 0x80 // continuation: one byte follows, then another control byte
	ctrlDC = 0x40 // the bytes are display data, not commands
)

// Device is an SSD1306 twin. It implements twin.I2C. The zero value is not
// usable; call New. Methods are safe for concurrent use.
type Device struct {
	mu  sync.Mutex
	ram [Pages][Width]byte

	on                 bool
	contrast           byte
	remap              bool // 0xA1: column 127 drives SEG0
	scanDown           bool // 0xC8: COM scan from COM[N-1] to COM0
	inverted           bool // 0xA7
	entireOn           bool // 0xA5
	chargePump         bool // 0x8D 0x14
	startLine          int  // 0x40–0x7F
	mux                int  // 0xA8: multiplex ratio + 1 rows shown
	mode               byte
	col                int // column pointer
	page               int // page pointer
	colStart, colEnd   int
	pageStart, pageEnd int

	cmd  []byte // command being collected
	want int    // bytes cmd needs in all
}

// New returns a controller just reset: display off, contrast 0x7F, page
// addressing, full column and page ranges, RAM cleared.
func New() *Device {
	return &Device{contrast: 0x7F, mode: PageMode, colEnd: Width - 1, pageEnd: Pages - 1, mux: Height}
}

// Tx implements twin.I2C.
func (d *Device) Tx(w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := 0; i < len(w); {
		ctrl := w[i]
		i++
		if ctrl&ctrlCo != 0 {
			// One byte, then another control byte.
			if i < len(w) {
				d.take(ctrl&ctrlDC != 0, w[i])
				i++
			}
			continue
		}
		for ; i < len(w); i++ {
			d.take(ctrl&ctrlDC != 0, w[i])
		}
	}
	if len(r) > 0 {
		var status byte
		if !d.on {
			status |= 0x40
		}
		for i := range r {
			r[i] = status
		}
	}
	return nil
}

// take consumes one command or data byte; d.mu must be held.
func (d *Device) take(data bool, b byte) {
	if data {
		d.data(b)
		return
	}
	if len(d.cmd) == 0 {
		d.want = 1 + args(b)
	}
	d.cmd = append(d.cmd, b)
	if len(d.cmd) < d.want {
		return
	}
	d.exec(d.cmd)
	d.cmd = d.cmd[:0]
}

// args returns how many argument bytes command c takes.
func args(c byte) int {
	switch c {
	case 0x81, 0x20, 0xA8, 0xD3, 0xD5, 0xD9, 0xDA, 0xDB, 0x8D:
		return 1
	case 0x21, 0x22, 0xA3:
		return 2
	case 0x29, 0x2A:
		return 5
	case 0x26, 0x27:
		return 6
	}
	return 0
}

func (d *Device) exec(c []byte) {
	switch op := c[0]; {
	case op == 0xAE:
		d.on = false
	case op == 0xAF:
		d.on = true
	case op == 0x81:
		d.contrast = c[1]
	case op == 0x8D:
		d.chargePump = c[1]&0x04 != 0
	case op == 0xA0, op == 0xA1:
		d.remap = op == 0xA1
	case op == 0xC0, op == 0xC8:
		d.scanDown = op == 0xC8
	case op == 0xA6, op == 0xA7:
		d.inverted = op == 0xA7
	case op == 0xA4, op == 0xA5:
		d.entireOn = op == 0xA5
	case op >= 0x40 && op <= 0x7F:
		d.startLine = int(op & 0x3F)
	case op == 0xA8:
		if m := int(c[1]&0x3F) + 1; m >= 16 {
			d.mux = m // values below 15 are invalid and ignored
		}
	case op == 0x20:
		if m := c[1] & 3; m <= PageMode {
			d.mode = m
		}
	case op == 0x21:
		d.colStart, d.colEnd = int(c[1]&0x7F), int(c[2]&0x7F)
		d.col = d.colStart
	case op == 0x22:
		d.pageStart, d.pageEnd = int(c[1]&7), int(c[2]&7)
		d.page = d.pageStart
	case op <= 0x0F: // page mode: lower nibble of the column
		d.col = d.col&0xF0 | int(op)
	case op >= 0x10 && op <= 0x1F: // page mode: upper nibble
		d.col = int(op&0x07)<<4 | d.col&0x0F
	case op >= 0xB0 && op <= 0xB7: // page mode: page
		d.page = int(op & 7)
	}
}

// data writes one byte of display RAM and moves the pointers as the
// addressing mode says; d.mu must be held.
func (d *Device) data(b byte) {
	d.ram[d.page][d.col] = b
	switch d.mode {
	case PageMode:
		// The column wraps within the page; the page never changes.
		d.col = (d.col + 1) % Width
	case Horizontal:
		if d.col++; d.col > d.colEnd {
			d.col = d.colStart
			if d.page++; d.page > d.pageEnd {
				d.page = d.pageStart
			}
		}
	case Vertical:
		if d.page++; d.page > d.pageEnd {
			d.page = d.pageStart
			if d.col++; d.col > d.colEnd {
				d.col = d.colStart
			}
		}
	}
}

// On reports whether the display is switched on (command 0xAF).
func (d *Device) On() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.on
}

// Contrast returns the contrast setting (command 0x81).
func (d *Device) Contrast() byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.contrast
}

// Pixel reports whether the pixel at column x, row y is lit in display RAM.
// Coordinates outside the display are dark.
func (d *Device) Pixel(x, y int) bool {
	if x < 0 || x >= Width || y < 0 || y >= Height {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ram[y/8][x]>>(y%8)&1 != 0
}

// Framebuffer returns a copy of display RAM as 1024 bytes, page by page:
// the layout drivers send.
func (d *Device) Framebuffer() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]byte, 0, Pages*Width)
	for p := range d.ram {
		out = append(out, d.ram[p][:]...)
	}
	return out
}

// Lit reports whether the panel shows anything: display on with the charge
// pump that makes its drive voltage enabled (the common modules have no
// external VCC).
func (d *Device) Lit() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.on && d.chargePump
}

// Image returns what the panel shows, as a 128×64 grey image (lit pixels
// 255, dark 0), seen on a module mounted the usual way up: the way that
// segment remap (0xA1) and COM scan from the bottom (0xC8) draw upright,
// so without them the picture is mirrored as on the real panel. It applies
// the display start line, the multiplex ratio (rows beyond it are dark),
// inversion and entire-display-on, and is black while the panel is not
// Lit.
func (d *Device) Image() *image.Gray {
	d.mu.Lock()
	defer d.mu.Unlock()
	img := image.NewGray(image.Rect(0, 0, Width, Height))
	if !d.on || !d.chargePump {
		return img
	}
	for y := 0; y < d.mux && y < Height; y++ {
		row := (y + d.startLine) % Height
		if !d.scanDown {
			row = (Height - 1 - y + d.startLine) % Height
		}
		for x := 0; x < Width; x++ {
			col := x
			if !d.remap {
				col = Width - 1 - x
			}
			lit := d.ram[row/8][col]>>(row%8)&1 != 0
			if d.entireOn {
				lit = true
			} else if d.inverted {
				lit = !lit
			}
			if lit {
				img.SetGray(x, y, color.Gray{Y: 0xFF})
			}
		}
	}
	return img
}

// WritePNG writes Image as a PNG.
func (d *Device) WritePNG(w io.Writer) error { return png.Encode(w, d.Image()) }

// RAM returns a copy of display RAM: page p, column x holds rows 8p to 8p+7,
// least significant bit on top.
func (d *Device) RAM() [Pages][Width]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ram
}
