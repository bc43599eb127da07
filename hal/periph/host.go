package periph

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/conn/v3/physic"
	pspi "periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spireg"
	"periph.io/x/host/v3"
	"periph.io/x/host/v3/bcm283x"
	"periph.io/x/host/v3/distro"
	"periph.io/x/host/v3/gpioioctl"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/i2c"
)

// ErrNoGPIOChip is returned by Open on a machine without a GPIO character
// device.
var ErrNoGPIOChip = errors.New("periph: no GPIO character device (/dev/gpiochip*): not a Raspberry Pi, or the kernel's GPIO driver is missing or not readable (is the user in the gpio group?)")

// hardwarePWM lists the BCM GPIOs wired to the SoC's two PWM channels that
// bcm283x drives without DMA.
var hardwarePWM = [...]int{12, 13, 18, 19}

// Options configures a Host. Nil means defaults.
type Options struct {
	// Clock stamps GPIO edges; nil means clock.Real.
	Clock clock.Clock
}

// Host opens the machine's GPIO lines, PWM channels, I²C buses and SPI
// devices through periph. Open it once per process.
type Host struct {
	clk clock.Clock
}

// Open initialises periph's host drivers and checks that the machine has a
// GPIO character device.
func Open(o *Options) (*Host, error) {
	if o == nil {
		o = &Options{}
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	if _, err := host.Init(); err != nil {
		return nil, fmt.Errorf("periph: host drivers: %w", err)
	}
	if len(gpioioctl.Chips) == 0 {
		return nil, ErrNoGPIOChip
	}
	return &Host{clk: clk}, nil
}

// GPIO returns BCM GPIO bcm as a line of the GPIO character device. Lines
// are found by name ("GPIO17"), SoC pinctrl chips first, which is how both
// the Pi 4 (pinctrl-bcm2711) and the Pi 5 (pinctrl-rp1) name their header.
func (h *Host) GPIO(bcm int) (*Pin, error) {
	line, err := findLine(bcm)
	if err != nil {
		return nil, err
	}
	return NewPin(line, bcm, h.clk), nil
}

func findLine(bcm int) (*gpioioctl.GPIOLine, error) {
	name := "GPIO" + strconv.Itoa(bcm)
	for _, chip := range gpioioctl.Chips {
		if l := chip.ByName(name); l != nil {
			return l, nil
		}
	}
	if len(gpioioctl.Chips) == 0 {
		return nil, ErrNoGPIOChip
	}
	return nil, fmt.Errorf("periph: %s: no line of that name on %s", name, chipNames())
}

func chipNames() string {
	s := ""
	for i, c := range gpioioctl.Chips {
		if i > 0 {
			s += ", "
		}
		s += c.Name() + " (" + c.Label() + ")"
	}
	return s
}

// PWM returns the hardware PWM output on BCM GPIO bcm: GPIO12, 13, 18 or
// 19 of a Pi 0–4, with /dev/mem open to the process (root). periph times
// GPIO12 and 18 by DMA, so each has its own signal; GPIO13 and 19 are the
// one PWM1 channel, so using both gives them the same signal.
func (h *Host) PWM(bcm int) (*PWM, error) {
	found := false
	for _, n := range hardwarePWM {
		found = found || n == bcm
	}
	if !found {
		return nil, fmt.Errorf("periph: GPIO%d has no hardware PWM channel (those are GPIO12, 13, 18 and 19); drive servos on other pins through a PCA9685", bcm)
	}
	if !bcm283x.Present() || isBCM2712() {
		return nil, fmt.Errorf("periph: GPIO%d: hardware PWM needs the PWM block of a Raspberry Pi 0–4 (BCM2835–BCM2711); this machine has none (a Pi 5's PWM is on its RP1 chip, which periph does not drive)", bcm)
	}
	p := bcm283xPin(bcm)
	if p == nil {
		return nil, fmt.Errorf("periph: GPIO%d: the bcm283x driver did not start (run as root for /dev/mem)", bcm)
	}
	return NewPWM(p, bcm), nil
}

// isBCM2712 reports whether this is a Raspberry Pi 5. periph's bcm283x
// driver accepts its SoC, but the PWM and clock registers it would write
// are not where a Pi 5 has them.
func isBCM2712() bool {
	for _, c := range distro.DTCompatible() {
		if strings.Contains(c, "bcm2712") {
			return true
		}
	}
	return false
}

func bcm283xPin(bcm int) pgpio.PinIO {
	var p *bcm283x.Pin
	switch bcm {
	case 12:
		p = bcm283x.GPIO12
	case 13:
		p = bcm283x.GPIO13
	case 18:
		p = bcm283x.GPIO18
	case 19:
		p = bcm283x.GPIO19
	}
	if p == nil {
		return nil
	}
	return p
}

// I2CBus is an opened I²C bus; Close releases /dev/i2c-N. It implements
// i2c.Bus.
type I2CBus struct {
	bus   i2c.Bus // *I2C, or *SMBus for an SMBus-only adapter
	close func() error
}

// Tx implements i2c.Bus.
func (b *I2CBus) Tx(addr uint16, w, r []byte) error { return b.bus.Tx(addr, w, r) }

func (b *I2CBus) String() string { return fmt.Sprint(b.bus) }

// Close releases the bus.
func (b *I2CBus) Close() error { return b.close() }

// I2C opens /dev/i2c-<bus>; see OpenI2C.
func (h *Host) I2C(bus int) (*I2CBus, error) { return OpenI2C(bus) }

// OpenI2C opens /dev/i2c-<bus>. It needs no GPIO, so it also serves
// machines without a GPIO character device. An adapter that does plain I²C
// (a Raspberry Pi's) is driven through periph's I2C_RDWR transfers; one that
// offers only SMBus transfers (a PC's SMBus controller, the kernel's
// i2c-stub) through SMBus, which carries the register reads and writes
// chips make (see SMBus).
func OpenI2C(bus int) (*I2CBus, error) {
	name := strconv.Itoa(bus)
	sm, closeSM, err := openSMBus(bus, name)
	if err != nil {
		return nil, fmt.Errorf("periph: I²C bus %d: %w", bus, err)
	}
	if sm != nil {
		return &I2CBus{bus: sm, close: closeSM}, nil
	}
	if _, err := host.Init(); err != nil {
		return nil, fmt.Errorf("periph: host drivers: %w", err)
	}
	b, err := i2creg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("periph: I²C bus %d: %w", bus, err)
	}
	return &I2CBus{bus: NewI2C(b, name), close: b.Close}, nil
}

var _ i2c.Bus = (*I2CBus)(nil)

// SPIConn is an opened SPI device; Close releases /dev/spidevB.C.
type SPIConn struct {
	*SPI
	close func() error
}

// Close releases the device.
func (c *SPIConn) Close() error { return c.close() }

// SPIMode is an SPI clock mode, 0–3 (CPOL<<1 | CPHA).
type SPIMode int

// SPI opens /dev/spidev<bus>.<cs> at maxHz in mode with 8-bit words.
func (h *Host) SPI(bus, cs int, maxHz int64, mode SPIMode) (*SPIConn, error) {
	name := fmt.Sprintf("%d.%d", bus, cs)
	if mode < 0 || mode > 3 {
		return nil, fmt.Errorf("periph: SPI %s: mode %d, want 0–3", name, mode)
	}
	if maxHz <= 0 {
		return nil, fmt.Errorf("periph: SPI %s: clock %d Hz, want > 0", name, maxHz)
	}
	port, err := spireg.Open("/dev/spidev" + name)
	if err != nil {
		return nil, fmt.Errorf("periph: SPI %s: %w", name, err)
	}
	c, err := port.Connect(physic.Frequency(maxHz)*physic.Hertz, pspi.Mode(mode), 8)
	if err != nil {
		_ = port.Close()
		return nil, fmt.Errorf("periph: SPI %s: %w", name, err)
	}
	return &SPIConn{SPI: NewSPI(c, name), close: port.Close}, nil
}
