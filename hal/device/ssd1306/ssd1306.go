package ssd1306

import (
	"fmt"

	"github.com/saint-os/saint/hal/i2c"
)

// DefaultAddr is the address with SA0 low; 0x3D with it high.
const DefaultAddr = 0x3C

// Opts configures a Dev. Nil Opts, like zero fields, take the defaults.
type Opts struct {
	// Addr is the I²C address; 0 means DefaultAddr.
	Addr uint16
	// Height is 64 or 32 rows; 0 means 64. The width is always 128.
	Height int
	// Contrast is the brightness, 0–255; 0 means 0xCF.
	Contrast byte
	// Rotated turns the picture by 180° for a module mounted upside down.
	Rotated bool
	// MaxTxBytes limits the data bytes of one transaction (not counting the
	// control byte); 0 means no limit.
	MaxTxBytes int
}

// Width is the number of columns.
const Width = 128

// Dev is an SSD1306 on an I²C bus. Methods are not safe for concurrent
// use.
type Dev struct {
	bus   i2c.Bus
	addr  uint16
	opts  Opts
	frame *Frame
}

// New initialises the display at opts.Addr on bus and clears it.
func New(bus i2c.Bus, opts *Opts) (*Dev, error) {
	if opts == nil {
		opts = &Opts{}
	}
	d := &Dev{bus: bus, opts: *opts}
	d.addr = d.opts.Addr
	if d.addr == 0 {
		d.addr = DefaultAddr
	}
	if d.opts.Height == 0 {
		d.opts.Height = 64
	}
	if d.opts.Contrast == 0 {
		d.opts.Contrast = 0xCF
	}
	if d.opts.Height != 64 && d.opts.Height != 32 {
		return nil, fmt.Errorf("ssd1306: Height %d, want 32 or 64", d.opts.Height)
	}
	if d.opts.MaxTxBytes < 0 {
		return nil, fmt.Errorf("ssd1306: MaxTxBytes %d, want 0 (no limit) or more", d.opts.MaxTxBytes)
	}
	d.frame = NewFrame(Width, d.opts.Height)
	if err := d.command("init", d.initSequence()...); err != nil {
		return nil, err
	}
	if err := d.Flush(); err != nil {
		return nil, err
	}
	return d, nil
}

// initSequence returns the commands New sends.
func (d *Dev) initSequence() []byte {
	comPins, remap, scan := byte(comPinsAlternative), byte(cmdSegRemap|1), byte(cmdComScanDown)
	if d.opts.Height == 32 {
		comPins = comPinsSequential // on 128×32 modules
	}
	if d.opts.Rotated {
		remap, scan = cmdSegRemap, cmdComScanUp
	}
	return []byte{
		cmdDisplayOff,
		cmdClockDiv, 0x80, // clock divide ratio 1, oscillator frequency 8
		cmdMultiplex, byte(d.opts.Height - 1),
		cmdDisplayOffset, 0x00,
		cmdStartLine, // line 0
		cmdChargePump, chargePumpOn,
		cmdMemoryMode, memoryHorizontal,
		remap, // column 127 at SEG0 (0xA1), or not
		scan,  // scan COM[N-1] to COM0 (0xC8), or up
		cmdComPins, comPins,
		cmdContrast, d.opts.Contrast,
		cmdPrecharge, 0xF1, // phase 1 1 clock, phase 2 15 clocks
		cmdVcomDeselect, 0x40,
		cmdShowRAM,
		cmdNormal, // not inverted
		cmdScrollOff,
		cmdDisplayOn,
	}
}

// String returns "SSD1306{0x3c}".
func (d *Dev) String() string { return fmt.Sprintf("SSD1306{0x%02x}", d.addr) }

// Frame returns the framebuffer; draw into it, then Flush.
func (d *Dev) Frame() *Frame { return d.frame }

// Flush sends the pages of the frame that changed since the last Flush, in
// one window from the first to the last changed page. It sends nothing
// when nothing changed.
func (d *Dev) Flush() error {
	f := d.frame
	if f.dirty == 0 {
		return nil
	}
	first, last := -1, 0
	for p := 0; p < (f.h+7)/8; p++ {
		if f.dirty&(1<<p) != 0 {
			if first < 0 {
				first = p
			}
			last = p
		}
	}
	if err := d.command("address window", cmdColumnAddr, 0, Width-1, cmdPageAddr, byte(first), byte(last)); err != nil {
		return err
	}
	data := f.pix[first*Width : (last+1)*Width]
	chunk := len(data)
	if d.opts.MaxTxBytes > 0 {
		chunk = d.opts.MaxTxBytes
	}
	buf := make([]byte, 0, 1+chunk)
	for len(data) > 0 {
		n := min(chunk, len(data))
		buf = append(append(buf[:0], ctrlData), data[:n]...)
		if err := d.bus.Tx(d.addr, buf, nil); err != nil {
			return fmt.Errorf("ssd1306: 0x%02x: writing display data: %w", d.addr, err)
		}
		data = data[n:]
	}
	f.dirty = 0
	return nil
}

// SetContrast sets the brightness.
func (d *Dev) SetContrast(c byte) error { return d.command("contrast", 0x81, c) }

// Invert shows dark pixels lit and lit pixels dark (true) or normally.
func (d *Dev) Invert(inverted bool) error {
	if inverted {
		return d.command("invert", 0xA7)
	}
	return d.command("invert", 0xA6)
}

// Display switches the panel on or off (sleep); RAM is kept.
func (d *Dev) Display(on bool) error {
	if on {
		return d.command("display on", 0xAF)
	}
	return d.command("display off", 0xAE)
}

func (d *Dev) command(name string, cmds ...byte) error {
	if err := d.bus.Tx(d.addr, append([]byte{ctrlCommands}, cmds...), nil); err != nil {
		return fmt.Errorf("ssd1306: 0x%02x: sending %s: %w", d.addr, name, err)
	}
	return nil
}
