// Package periph adapts periph.io drivers to the HAL interfaces, so chip
// drivers and roles written against hal/gpio, hal/pwm, hal/i2c and hal/spi
// run on a real Raspberry Pi.
//
// The adapters (Pin, PWM, I2C, SPI) wrap any periph.io/x/conn/v3 value, so
// they are tested with periph's own fakes (gpiotest, i2ctest, spitest). Host
// opens the real ones:
//
//   - GPIO through the Linux GPIO character device (/dev/gpiochip*, periph's
//     gpioioctl driver). Current Raspberry Pi OS has no sysfs GPIO, and the
//     character device is also what a Pi 5 (RP1) offers. A pin is looked up
//     by its line name, "GPIO17", on the chips periph lists (the SoC's
//     pinctrl chip first).
//   - Hardware PWM through periph's bcm283x driver on GPIO12, 13, 18 and 19
//     of a Pi 0–4: GPIO12 and 18 timed by DMA from the PWM clock, each with
//     its own signal, GPIO13 and 19 the PWM1 channel (one signal for both).
//     It maps /dev/mem, so it needs root: saint-node drives hardware PWM
//     through hal/sysfspwm (/sys/class/pwm) instead, and this path is kept
//     for the smoke test and for tools that run as root. Other pins, a Pi 5 (whose PWM is
//     on the RP1) and machines without a bcm283x get an error naming the
//     pin; servos that need more channels go on a PCA9685 over I²C.
//   - I²C and SPI through i2creg and spireg (/dev/i2c-N, /dev/spidevB.C).
//     OpenI2C (and Host.I2C) asks the adapter what it can do (I2C_FUNCS):
//     one that moves only SMBus transfers, such as a PC's SMBus controller
//     or the kernel's i2c-stub, has no I2C_RDWR, so SMBus carries the
//     transactions instead, each as the SMBus transfer that puts the same
//     bytes on the wire (a register read is "read word data"). OpenI2C needs
//     no GPIO chip, so it serves machines that have none.
//
// # Edge timestamps
//
// Pin.WatchEdges runs one goroutine per watch that blocks in periph's
// WaitForEdge and stamps each edge with the injected clock (clock.Real on a
// robot) as soon as WaitForEdge returns. periph reads the kernel's event
// record but does not expose its timestamp, so a stamp is late by the
// wake-up latency of that goroutine: typically tens of microseconds on an
// idle Pi 4, more under load. That is good enough for RC PWM (1000–2000 µs
// pulses, ±1 %) and encoder counting; it is not a logic analyser.
//
// The level reported with an edge is the edge's own level when one edge is
// watched (rising: high, falling: low) and a read right after the wake-up
// when both are: a pulse shorter than the wake-up latency can then be
// reported with the level it ended at.
//
// Real hardware is exercised by package smoketest, built only with the
// "hardware" build tag.
package periph
