package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/pi"
	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/periph"
	"github.com/saint-os/saint/hal/pwm"
	"github.com/saint-os/saint/hal/rpicam"
	"github.com/saint-os/saint/hal/serial"
	"github.com/saint-os/saint/hal/socketcan"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/hal/sysfspwm"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/hal/v4l2"
)

// SPI devices are opened at this clock and mode: every chip a role drives
// over SPI today (QMI8658, MCP2515) takes mode 0, and 1 MHz is within all
// of their limits.
const (
	spiClockHz = 1_000_000
	spiMode    = periph.SPIMode(0)
)

// openPiBoard builds the board of the Raspberry Pi this runs on, its buses
// served by hal/periph (GPIO, I²C, SPI), hal/sysfspwm (hardware PWM through
// /sys/class/pwm, which needs no root), hal/socketcan (CAN) and hal/serial
// (UART). On a machine that is not a Raspberry Pi it says what is missing.
func openPiBoard(nodeID string) (board.Board, error) {
	hw, hostErr, pwmErr := openPiHardware()
	b, boardErr := pi.New(&pi.Options{
		NodeID:     nodeID,
		Hardware:   hw,
		OpenCamera: openPiCamera,
	})
	if err := errors.Join(boardErr, hostErr, pwmErr); err != nil {
		return nil, fmt.Errorf("--hal pi: this machine cannot run a Raspberry Pi node (use --hal sim elsewhere):\n%w", err)
	}
	return b, nil
}

// openPiCamera opens a camera the Pi board found: a CSI camera ("csi0")
// through Raspberry Pi OS's rpicam-vid, a USB camera ("video2") through
// V4L2 (YUYV or MJPEG).
func openPiCamera(p board.Peripheral) (camera.Camera, error) {
	if n, ok := strings.CutPrefix(p.Address, "csi"); ok {
		idx, err := strconv.Atoi(n)
		if err != nil {
			return nil, fmt.Errorf("camera %q: not a CSI camera number", p.Address)
		}
		return rpicam.New(rpicam.Options{Index: idx}), nil
	}
	if strings.HasPrefix(p.Address, "video") {
		return v4l2.New(v4l2.Options{Path: "/dev/" + p.Address}), nil
	}
	return nil, fmt.Errorf("camera %q (%s): no backend for it", p.Address, p.Description)
}

// openPiHardware opens the machine's GPIO character devices (with I²C and
// SPI) and its hardware PWM. Either may fail: the hardware returned then
// answers that part with the error, and serves the rest.
func openPiHardware() (hw *piHardware, hostErr, pwmErr error) {
	clk := clock.Real{}
	host, hostErr := periph.Open(&periph.Options{Clock: clk})
	pwms, pwmErr := sysfspwm.Open(nil)
	return &piHardware{host: host, hostErr: hostErr, pwm: pwms, pwmErr: pwmErr, clk: clk, canWait: 5 * time.Second}, hostErr, pwmErr
}

// piHardware opens each bus once, on first use, and keeps it for the life of
// the process. It implements board.Hardware.
type piHardware struct {
	host    *periph.Host
	hostErr error // why host is nil
	pwm     *sysfspwm.Host
	pwmErr  error // why pwm is nil
	clk     clock.Clock
	// canWait bounds how long opening a CAN interface may take.
	canWait time.Duration

	mu   sync.Mutex
	i2c  map[int]*periph.I2CBus
	spi  map[[2]int]*periph.SPIConn
	can  map[string]*socketcan.Bus
	uart map[string]*serial.Port
}

func (h *piHardware) GPIO(bcm int) (gpio.PinIO, error) {
	if h.host == nil {
		return nil, h.hostErr
	}
	return h.host.GPIO(bcm)
}

// PWM opens the hardware PWM channel of GPIO12, 13, 18 or 19 through the
// kernel's PWM subsystem (the pwm-2chan overlay on a Pi 4 or Pi 5).
func (h *piHardware) PWM(bcm int) (pwm.Pin, error) {
	if h.pwm == nil {
		return nil, h.pwmErr
	}
	return h.pwm.PWM(bcm)
}

func (h *piHardware) I2C(bus int) (i2c.Bus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.i2c[bus]; ok {
		return b, nil
	}
	if h.host == nil {
		return nil, h.hostErr
	}
	b, err := h.host.I2C(bus)
	if err != nil {
		return nil, err
	}
	if h.i2c == nil {
		h.i2c = map[int]*periph.I2CBus{}
	}
	h.i2c[bus] = b
	return b, nil
}

func (h *piHardware) SPI(bus, cs int) (spi.Conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := [2]int{bus, cs}
	if c, ok := h.spi[key]; ok {
		return c, nil
	}
	if h.host == nil {
		return nil, h.hostErr
	}
	c, err := h.host.SPI(bus, cs, spiClockHz, spiMode)
	if err != nil {
		return nil, err
	}
	if h.spi == nil {
		h.spi = map[[2]int]*periph.SPIConn{}
	}
	h.spi[key] = c
	return c, nil
}

func (h *piHardware) CAN(name string) (can.Bus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.can[name]; ok {
		return b, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.canWait)
	defer cancel()
	b, err := socketcan.Open(ctx, name, &socketcan.Options{Clock: h.clk})
	if err != nil {
		return nil, err
	}
	if h.can == nil {
		h.can = map[string]*socketcan.Bus{}
	}
	h.can[name] = b
	return b, nil
}

// UART opens a serial device by name ("ttyAMA0", "serial0", "ttyUSB0") or
// path.
func (h *piHardware) UART(name string) (uart.Port, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p, ok := h.uart[name]; ok {
		return p, nil
	}
	path := name
	if !strings.HasPrefix(path, "/") {
		path = "/dev/" + name
	}
	p, err := serial.Open(path, &serial.Options{Clock: h.clk})
	if err != nil {
		return nil, err
	}
	if h.uart == nil {
		h.uart = map[string]*serial.Port{}
	}
	h.uart[name] = p
	return p, nil
}

var _ board.Hardware = (*piHardware)(nil)
