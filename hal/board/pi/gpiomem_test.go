package pi

import (
	"errors"
	"testing"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/boardtest"
	"github.com/saint-os/saint/hal/gpio"
)

// registers is the GPIO block as /dev/gpiomem maps it: 32-bit words by
// byte offset.
type registers map[int]uint32

func (r registers) word(off int) uint32 { return r[off] }

// The datasheet's layout (BCM2835 ARM Peripherals 6.1): GPFSELn holds pins
// 10n–10n+9, three bits each; GPLEV0 pins 0–31, GPLEV1 32–53.
func TestBCMPinRegisters(t *testing.T) {
	regs := registers{
		0x04: 0b001 << 21, // GPFSEL1: GPIO17 output
		0x08: 0b100 << 6,  // GPFSEL2: GPIO22 alternate function 0
		0x34: 1<<17 | 1<<22 | 1<<5,
		0x38: 1 << (40 - 32),
	}
	r := bcmPinRegisters{word: regs.word}
	for _, tc := range []struct {
		bcm    int
		level  gpio.Level
		output bool
	}{
		{17, gpio.High, true},
		{22, gpio.High, false},
		{5, gpio.High, false},
		{6, gpio.Low, false},
		{40, gpio.High, false},
		{27, gpio.Low, false},
	} {
		l, out, err := r.Pin(tc.bcm)
		if err != nil || l != tc.level || out != tc.output {
			t.Errorf("GPIO%d: %v output=%v %v, want %v output=%v", tc.bcm, l, out, err, tc.level, tc.output)
		}
	}
	if _, _, err := r.Pin(54); err == nil {
		t.Error("GPIO54 read")
	}
}

// fakeReader is a PinReader over fixed levels; pins it does not list fail.
type fakeReader map[int]struct {
	level  gpio.Level
	output bool
}

func (f fakeReader) Pin(bcm int) (gpio.Level, bool, error) {
	p, ok := f[bcm]
	if !ok {
		return gpio.Low, false, errors.New("not readable")
	}
	return p.level, p.output, nil
}

// An unadopted node reports each free pin's level, read without opening
// it; the node's own pins keep what the node did, bus pins stay the bus's.
func TestFreePinsReportTheirLevel(t *testing.T) {
	backend := boardtest.New(nil)
	reader := fakeReader{
		5:  {gpio.Low, false},
		17: {gpio.High, false},
		26: {gpio.High, true},
		2:  {gpio.High, false}, // I²C SDA, idle high: reported as the bus's
		21: {gpio.High, false},
	}
	b := newPi4(t, &Options{Hardware: backend.Hardware(), PinReader: reader})
	for _, tc := range []struct {
		bcm   int
		dir   board.Direction
		state string
	}{
		{5, board.DirInput, "low"},
		{17, board.DirInput, "high"},
		{26, board.DirOutput, "high"},
		{2, board.DirI2C, StateUnknown},
		{6, board.DirInput, StateUnknown}, // the reader cannot read it
	} {
		if p := pinByBCM(t, b, tc.bcm); p.Direction != tc.dir || p.State != tc.state || (p.InUse != (tc.dir == board.DirI2C)) {
			t.Errorf("GPIO%d = %+v, want %s %s", tc.bcm, p, tc.dir, tc.state)
		}
	}
	// Opened by the node: what the node did wins over the reader.
	pin, err := b.Hardware().GPIO(21)
	if err != nil {
		t.Fatal(err)
	}
	if err := pin.Out(gpio.Low); err != nil {
		t.Fatal(err)
	}
	if p := pinByBCM(t, b, 21); p.Direction != board.DirOutput || p.State != "low" {
		t.Errorf("GPIO21 driven low by the node = %+v", p)
	}
}
