package rpi

import (
	"strconv"

	"github.com/saint-os/saint/hal/gpio"
)

// HeaderPin is one pin of the 40-pin header.
type HeaderPin struct {
	Number int    // physical pin, 1–40; odd pins are the row nearer the SoC
	BCM    int    // BCM GPIO number, or -1 for a power or ground pin
	Name   string // "GPIO17", "3V3", "5V" or "GND"
	Alt    string // the alternate function it is commonly used for, "I2C1 SDA"; may be empty
}

// IsGPIO reports whether the pin carries a GPIO.
func (p HeaderPin) IsGPIO() bool { return p.BCM >= 0 }

const (
	v33 = -1 - iota
	v5
	gnd
)

// header is the 40-pin header, indexed by physical pin number - 1. It is
// never written.
var header = [40]HeaderPin{
	pw(1, v33), pw(2, v5),
	io(3, 2, "I2C1 SDA"), pw(4, v5),
	io(5, 3, "I2C1 SCL"), pw(6, gnd),
	io(7, 4, "GPCLK0"), io(8, 14, "UART0 TXD"),
	pw(9, gnd), io(10, 15, "UART0 RXD"),
	io(11, 17, ""), io(12, 18, "PWM0"),
	io(13, 27, ""), pw(14, gnd),
	io(15, 22, ""), io(16, 23, ""),
	pw(17, v33), io(18, 24, ""),
	io(19, 10, "SPI0 MOSI"), pw(20, gnd),
	io(21, 9, "SPI0 MISO"), io(22, 25, ""),
	io(23, 11, "SPI0 SCLK"), io(24, 8, "SPI0 CE0"),
	pw(25, gnd), io(26, 7, "SPI0 CE1"),
	io(27, 0, "ID_SD"), io(28, 1, "ID_SC"),
	io(29, 5, ""), pw(30, gnd),
	io(31, 6, ""), io(32, 12, "PWM0"),
	io(33, 13, "PWM1"), pw(34, gnd),
	io(35, 19, "PWM1"), io(36, 16, ""),
	io(37, 26, ""), io(38, 20, ""),
	pw(39, gnd), io(40, 21, ""),
}

func io(n, bcm int, alt string) HeaderPin {
	return HeaderPin{Number: n, BCM: bcm, Name: "GPIO" + strconv.Itoa(bcm), Alt: alt}
}

func pw(n, kind int) HeaderPin {
	name := "GND"
	switch kind {
	case v33:
		name = "3V3"
	case v5:
		name = "5V"
	}
	return HeaderPin{Number: n, BCM: -1, Name: name}
}

// Header returns the 40 pins of the header in physical order. The slice is
// the caller's.
func Header() []HeaderPin {
	return append([]HeaderPin(nil), header[:]...)
}

// GPIOs returns the 28 header pins that carry a GPIO (BCM 0–27), in physical
// order.
func GPIOs() []HeaderPin {
	out := make([]HeaderPin, 0, 28)
	for _, p := range header {
		if p.IsGPIO() {
			out = append(out, p)
		}
	}
	return out
}

// Physical returns the header pin that carries BCM GPIO bcm, or 0 and false
// if the header has no such GPIO.
func Physical(bcm int) (int, bool) {
	if bcm < 0 {
		return 0, false
	}
	for _, p := range header {
		if p.BCM == bcm {
			return p.Number, true
		}
	}
	return 0, false
}

// Pin returns header pin number n (1–40).
func Pin(n int) (HeaderPin, bool) {
	if n < 1 || n > len(header) {
		return HeaderPin{}, false
	}
	return header[n-1], true
}

// ResetPull returns the pull the SoC applies to GPIO bcm at power-on:
// GPIO0–8 are pulled up and GPIO9–27 pulled down. An unconnected input reads
// high or low accordingly.
func ResetPull(bcm int) gpio.Pull {
	if bcm <= 8 {
		return gpio.PullUp
	}
	return gpio.PullDown
}
