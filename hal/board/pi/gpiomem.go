package pi

import (
	"fmt"

	"github.com/saint-os/saint/hal/gpio"
)

// PinReader reads header pins without requesting them from the kernel: a
// request through the GPIO character device would take a line from
// whoever else holds it and, on the BCM2835 family, its release sets the
// pin back to an input, undoing an overlay's alternate function (the head's
// hardware PWM on GPIO12/13 before the role opens it, I²S, 1-Wire).
type PinReader interface {
	// Pin returns GPIO bcm's level and whether its function is output.
	Pin(bcm int) (level gpio.Level, output bool, err error)
}

// Register offsets of the BCM2835-family GPIO block (BCM2835 ARM
// Peripherals 6.1; the same on the BCM2711): three function-select bits per
// pin, ten pins per GPFSELn, and one level bit per pin in GPLEV0/1.
const (
	regGPFSEL0   = 0x00
	regGPLEV0    = 0x34
	fselOutput   = 0b001
	gpioBlockLen = 4096
	maxBCMGPIO   = 53
)

// bcmPinRegisters decodes the GPIO block's registers, read by word.
type bcmPinRegisters struct {
	word func(offset int) uint32
}

// Pin implements PinReader.
func (r bcmPinRegisters) Pin(bcm int) (gpio.Level, bool, error) {
	if bcm < 0 || bcm > maxBCMGPIO {
		return gpio.Low, false, fmt.Errorf("pi: GPIO%d: no such pin on the BCM2835 family", bcm)
	}
	fsel := r.word(regGPFSEL0+4*(bcm/10)) >> (3 * (bcm % 10)) & 0b111
	level := r.word(regGPLEV0+4*(bcm/32))>>(bcm%32)&1 == 1
	return gpio.Level(level), fsel == fselOutput, nil
}

// gpiomemSoCs are the SoCs whose /dev/gpiomem maps the BCM2835 GPIO block;
// a Pi 5's GPIOs are on the RP1, laid out otherwise.
var gpiomemSoCs = map[string]bool{"BCM2835": true, "BCM2836": true, "BCM2837": true, "BCM2711": true}
