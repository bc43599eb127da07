package board

import (
	"errors"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/pwm"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/hal/uart"
)

// Info identifies a board: what a node announces itself with.
type Info struct {
	// NodeID is the node's unique id: "pi-<serial>" on a Raspberry Pi.
	NodeID      string
	Serial      string
	MACAddress  string
	Model       string // "Raspberry Pi 4 Model B Rev 1.4", "SAINT sim board"
	HardwareRev string // "1.0"
	MemoryMB    int
	Address     string // the node's IP address, when known
}

// Direction is what a header pin is set up as.
type Direction string

// Pin directions, as NodeGPIOStatus reports them.
const (
	DirInput  Direction = "input"
	DirOutput Direction = "output"
	DirPWM    Direction = "pwm"
	DirI2C    Direction = "i2c"
	DirSPI    Direction = "spi"
	DirUART   Direction = "uart"
	DirCAN    Direction = "can"
)

// PinInfo describes one pin of the 40-pin header as an unadopted node
// reports it.
type PinInfo struct {
	Number    int       // physical header pin, 1–40
	BCM       int       // BCM GPIO number, e.g. 17
	Name      string    // BCM name, e.g. "GPIO17"
	Direction Direction //
	// State is "high", "low", or "pwm_<duty percent>" for a PWM output.
	State  string
	InUse  bool
	UsedBy string // the function that claimed the pin, e.g. "pan_servo"
}

// Peripheral is a detected peripheral.
type Peripheral struct {
	Type        string // "i2c", "spi", "usb", "camera", "uart", "can"
	Address     string // "1:0x68" (bus:address) for I2C, "0.0" for SPI, "can0" ...
	Description string // "MPU6050 IMU"
	Responsive  bool
}

// Metrics are the node's system metrics.
type Metrics struct {
	CPUTempC       float64
	CPUUsagePct    float64
	MemoryUsagePct float64
}

// Board is the hardware a generic node runs on: what it reports while
// unadopted, and what a role claims when it starts. Both the Raspberry Pi
// backend and the simulator implement it; node code sees only this.
//
// Methods are safe for concurrent use.
type Board interface {
	// Info returns the board's identity.
	Info() Info
	// Pins returns the state of the header's GPIO pins, ordered by number.
	Pins() []PinInfo
	// Scan probes the buses and returns the peripherals that answer (and
	// those expected but silent, with Responsive false).
	Scan() []Peripheral
	// Metrics returns CPU temperature, CPU and memory use.
	Metrics() Metrics
	// Claim marks the pin with BCM number bcm as used by usedBy in
	// direction dir.
	// Claiming a pin already claimed by someone else is an error
	// (*ConflictError).
	Claim(bcm int, dir Direction, usedBy string) error
	// ReleaseAll frees every claimed pin and returns outputs to inputs (the
	// safe state after a reset).
	ReleaseAll()
	// Hardware returns the board's buses for drivers to open.
	Hardware() Hardware
}

// ErrNotFound is returned for a pin, bus or port the board does not have.
var ErrNotFound = errors.New("board: not found")

// ConflictError reports a pin claimed twice.
type ConflictError struct {
	Pin    int    // BCM number
	UsedBy string // current owner
	Wanted string // who asked
}

func (e *ConflictError) Error() string {
	return "board: GPIO" + itoa(e.Pin) + " is used by " + e.UsedBy + ", cannot give it to " + e.Wanted
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Hardware gives drivers the board's buses. Pins are named by BCM number.
type Hardware interface {
	GPIO(bcm int) (gpio.PinIO, error)
	PWM(bcm int) (pwm.Pin, error)
	I2C(bus int) (i2c.Bus, error)
	SPI(bus, cs int) (spi.Conn, error)
	CAN(name string) (can.Bus, error)
	UART(name string) (uart.Port, error)
}
