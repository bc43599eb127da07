package ssd1306

import "sync"

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
	return &Device{contrast: 0x7F, mode: PageMode, colEnd: Width - 1, pageEnd: Pages - 1}
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

// RAM returns a copy of display RAM: page p, column x holds rows 8p to 8p+7,
// least significant bit on top.
func (d *Device) RAM() [Pages][Width]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ram
}
