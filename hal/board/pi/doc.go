// Package pi is the board.Board of a real Raspberry Pi: what saint-node
// --hal pi runs on.
//
// Identity comes from the machine: the model from /proc/device-tree/model
// (a board without one, or with another model, is not a Raspberry Pi and New
// refuses it), the serial and revision code from /proc/cpuinfo (the node id
// is "pi-<serial>"; the revision code gives the board revision and memory
// size), the MAC address of eth0 (or of the first other Ethernet-type
// interface) from /sys/class/net, the hostname from /proc/sys/kernel.
//
// Pins are the 28 GPIOs of the 40-pin header (hal/board/rpi). Pins that an
// enabled bus uses are reported as that bus's and cannot be opened as GPIO:
// GPIO2/3 when /dev/i2c-1 exists, GPIO7–11 for /dev/spidev0.*, GPIO14/15
// when the header UART (/dev/serial0) is enabled (unless serial0 is a Pi 5's
// debug-connector UART, ttyAMA10). Other pins report what
// the node did to them through Hardware: "input" with the level read,
// "output" with the level driven, "pwm_<duty %>". A pin the node has not
// opened is read through Options.PinReader, by default /dev/gpiomem mapped
// read-only on a Pi 2 to Pi 4 (BCM2835 family): its function select and
// level registers give "input" or "output" and the level without
// requesting the line. A request through the GPIO character device would
// take the line from whoever else holds it, and its release would set the
// pin to an input, undoing an overlay's alternate function. Where there is
// no such reader (a Pi 5, whose GPIOs are on the RP1; no access to
// /dev/gpiomem) the pin is reported in state "unknown", as are bus pins.
//
// Scan probes I²C bus 1 the way i2cdetect -r does (a one-byte read at each
// address from 0x03 to 0x77) and names what answers with Options.IdentifyI2C
// (by default i2cid.Identify, which reads identification registers). It lists the
// enabled SPI devices (/dev/spidev*), CAN interfaces (/sys/class/net/*
// whose type is 280, ARPHRD_CAN; responsive unless down), UARTs
// (/dev/serial0, /dev/ttyUSB*, /dev/ttyACM*), CSI camera sensors bound to
// their kernel drivers (/sys/bus/i2c/drivers/imx708/10-001a and the like,
// what libcamera finds) and USB cameras (/sys/class/video4linux, the Pi's
// own codec and ISP nodes left out).
//
// Metrics read the SoC temperature from /sys/class/thermal/thermal_zone0,
// CPU use from /proc/stat (since the previous call; since boot on the
// first), memory use from /proc/meminfo. SystemMetrics adds load, uptime
// and disk use.
//
// Every path is read through Options.Root, an fs.FS rooted at "/" on the
// Pi and at testdata/<machine> in tests, so the package is tested against
// a recorded Raspberry Pi 4 without one. The buses themselves come from
// Options.Hardware, which cmd/saint-node builds from hal/periph,
// hal/socketcan and hal/serial; this package imports none of them.
package pi
