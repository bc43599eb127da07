package pi

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/linuxhost"
	"github.com/saint-os/saint/hal/board/rpi"
	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/pwm"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/hal/uart"
)

// Options configures a Board. Nil Options read the running machine with no
// buses.
type Options struct {
	// Root is the filesystem /proc, /sys and /dev are read from; nil means
	// os.DirFS("/").
	Root fs.FS
	// NodeID overrides the node id, "pi-<serial>" by default.
	NodeID string
	// Hardware opens the machine's buses (GPIO lines, PWM channels, I²C,
	// SPI, CAN, UART); nil means a board whose every bus is
	// board.ErrNotFound.
	Hardware board.Hardware
	// IdentifyI2C names the chip answering at addr on bus during Scan; nil
	// means i2cid.Identify.
	IdentifyI2C func(bus i2c.Bus, addr uint16) string
	// DiskUsage returns the size and free bytes of the filesystem the node
	// runs from, for SystemMetrics; nil means linuxhost.StatFS("/").
	DiskUsage func() (total, free uint64, err error)
	// Address returns the node's IP address for Info; nil means the first
	// non-loopback IPv4 address of the machine.
	Address func() string
	// OpenCamera returns the camera behind a camera peripheral the board
	// found ("csi0": a CSI sensor; "video2": a USB camera); nil means the
	// board offers no camera. cmd/saint-node streams CSI cameras through
	// rpicam-vid (hal/rpicam) and USB cameras through V4L2 (hal/v4l2).
	OpenCamera func(board.Peripheral) (camera.Camera, error)
	// PinReader reads the level of the header pins the node has not opened,
	// without requesting them. Nil means /dev/gpiomem on a Pi whose SoC is
	// of the BCM2835 family (Pi 2 to Pi 4) when Root is nil too, and no
	// reader otherwise: such pins then report state "unknown".
	PinReader PinReader
}

// Details are identity facts beyond board.Info.
type Details struct {
	Hostname string
	Revision Revision
}

// Board is a Raspberry Pi. It implements board.Board. Methods are safe for
// concurrent use.
type Board struct {
	root     fs.FS
	info     board.Info
	details  Details
	hw       board.Hardware
	identify func(i2c.Bus, uint16) string
	address  func() string
	camera   func(board.Peripheral) (camera.Camera, error)

	// pinReader reads unopened pins (Options.PinReader); openPinReader
	// opens the default one the first time Pins needs it.
	pinReader     PinReader
	openPinReader func() (PinReader, error)

	mu   sync.Mutex
	pins []*pin // header order
	bcm  map[int]*pin
	host *linuxhost.Sampler
}

// pin is one GPIO of the header; its fields are guarded by Board.mu.
type pin struct {
	number int
	bcm    int
	busDir board.Direction // "" unless an enabled bus uses the pin
	busBy  string
	owner  string

	io    gpio.PinIO // nil until opened
	pwm   pwm.Pin    // nil until opened as PWM
	dir   board.Direction
	level gpio.Level // what an output drives
	duty  float64    // PWM duty while dir is DirPWM
	pwmOn bool
}

// ErrNotAPi is wrapped by New's error on a machine that is not a Raspberry
// Pi.
var ErrNotAPi = errors.New("not a Raspberry Pi")

// New reads the machine's identity and enabled buses. It fails on a machine
// whose /proc/device-tree/model does not name a Raspberry Pi, or whose
// /proc/cpuinfo has no serial number.
func New(o *Options) (*Board, error) {
	if o == nil {
		o = &Options{}
	}
	root := o.Root
	if root == nil {
		root = os.DirFS("/")
	}
	model, err := readString(root, "proc/device-tree/model")
	if err != nil {
		return nil, fmt.Errorf("pi: %w per /proc/device-tree/model (%v)", ErrNotAPi, err)
	}
	if !strings.HasPrefix(model, "Raspberry Pi") {
		return nil, fmt.Errorf("pi: %w per /proc/device-tree/model, which reads %q", ErrNotAPi, model)
	}
	ci, err := cpuinfo(root)
	if err != nil {
		return nil, fmt.Errorf("pi: /proc/cpuinfo: %w", err)
	}
	serial := ci["Serial"]
	if serial == "" {
		return nil, errors.New("pi: /proc/cpuinfo has no Serial line, want the SoC's serial number")
	}
	b := &Board{
		root:     root,
		hw:       o.Hardware,
		identify: o.IdentifyI2C,
		address:  o.Address,
		camera:   o.OpenCamera,
		bcm:      map[int]*pin{},
	}
	b.host = linuxhost.NewSampler(root, o.DiskUsage)
	if b.address == nil {
		b.address = firstIPv4
	}
	b.info = board.Info{
		NodeID: o.NodeID,
		Serial: serial,
		Model:  model,
	}
	if b.info.NodeID == "" {
		b.info.NodeID = "pi-" + strings.ToLower(serial)
	}
	if rev, err := parseRevision(ci["Revision"]); err == nil {
		b.details.Revision = rev
		b.info.HardwareRev = "1." + strconv.Itoa(rev.Revision)
		b.info.MemoryMB = rev.MemoryMB
	} else if mi, err := meminfo(root); err == nil {
		b.info.MemoryMB = int(mi["MemTotal"] / 1024)
	}
	b.info.MACAddress, _ = macAddress(root)
	b.pinReader = o.PinReader
	if b.pinReader == nil && o.Root == nil && gpiomemSoCs[b.details.Revision.SoC] {
		b.openPinReader = func() (PinReader, error) { return openGPIOMem("/dev/gpiomem") }
	}
	b.details.Hostname, _ = readString(root, "proc/sys/kernel/hostname")

	buses := b.enabledBusPins()
	for _, h := range rpi.GPIOs() {
		p := &pin{number: h.Number, bcm: h.BCM, dir: board.DirInput}
		if u, ok := buses[h.BCM]; ok {
			p.busDir, p.busBy = u.dir, u.by
		}
		b.pins = append(b.pins, p)
		b.bcm[h.BCM] = p
	}
	return b, nil
}

type busUse struct {
	dir board.Direction
	by  string
}

// enabledBusPins returns the header pins that enabled buses take, from the
// device nodes their drivers create.
func (b *Board) enabledBusPins() map[int]busUse {
	out := map[int]busUse{}
	exists := func(p string) bool { _, err := fs.Stat(b.root, p); return err == nil }
	if exists("dev/i2c-1") {
		out[2], out[3] = busUse{board.DirI2C, "i2c1"}, busUse{board.DirI2C, "i2c1"}
	}
	if exists("dev/spidev0.0") || exists("dev/spidev0.1") {
		for _, n := range []int{9, 10, 11} {
			out[n] = busUse{board.DirSPI, "spi0"}
		}
		if exists("dev/spidev0.0") {
			out[8] = busUse{board.DirSPI, "spi0"}
		}
		if exists("dev/spidev0.1") {
			out[7] = busUse{board.DirSPI, "spi0"}
		}
	}
	if b.headerUART() {
		out[14], out[15] = busUse{board.DirUART, "uart0"}, busUse{board.DirUART, "uart0"}
	}
	return out
}

// headerUART reports whether /dev/serial0, the UART Raspberry Pi OS puts on
// GPIO14/15, is enabled. On a Pi 5 it may instead point to the debug
// connector's UART (ttyAMA10), which takes no header pins.
func (b *Board) headerUART() bool {
	if _, err := fs.Stat(b.root, "dev/serial0"); err != nil {
		return false
	}
	target, err := fs.ReadLink(b.root, "dev/serial0")
	return err != nil || !strings.HasSuffix(target, "ttyAMA10")
}

// Info implements board.Board. Address is looked up on every call, since
// DHCP may change it.
func (b *Board) Info() board.Info {
	info := b.info
	info.Address = b.address()
	return info
}

// Camera implements camera.Provider: the first CSI camera the board finds,
// else the first USB camera, opened by Options.OpenCamera.
func (b *Board) Camera() (camera.Camera, error) {
	cams := b.scanCameras()
	if len(cams) == 0 {
		return nil, fmt.Errorf("pi: no CSI sensor bound to its driver (/sys/bus/i2c/drivers/imx708 ...; camera_auto_detect=1 in config.txt) and no USB camera (/sys/class/video4linux): %w", camera.ErrNotFitted)
	}
	if b.camera == nil {
		return nil, fmt.Errorf("pi: %s found but no camera backend: %w", cams[0].Description, camera.ErrNotFitted)
	}
	return b.camera(cams[0])
}

// Details returns the hostname and decoded revision code.
func (b *Board) Details() Details { return b.details }

// Pins implements board.Board.
func (b *Board) Pins() []board.PinInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pinReader == nil && b.openPinReader != nil {
		// Once: without /dev/gpiomem (no group gpio, a kernel without the
		// driver) unopened pins stay "unknown".
		b.pinReader, _ = b.openPinReader()
		b.openPinReader = nil
	}
	out := make([]board.PinInfo, 0, len(b.pins))
	for _, p := range b.pins {
		dir, state := p.describe(b.pinReader)
		out = append(out, board.PinInfo{
			Number:    p.number,
			BCM:       p.bcm,
			Name:      "GPIO" + strconv.Itoa(p.bcm),
			Direction: dir,
			State:     state,
			InUse:     p.owner != "" || p.busBy != "",
			UsedBy:    p.usedBy(),
		})
	}
	return out
}

// StateUnknown is the state of a bus pin, and of a pin the node has not
// opened on a board whose pins it cannot read without requesting them.
const StateUnknown = "unknown"

// describe returns the direction and state Pins reports, reading a pin the
// node has not opened with r (nil: none); Board.mu must be held.
func (p *pin) describe(r PinReader) (board.Direction, string) {
	switch {
	case p.busDir != "":
		return p.busDir, StateUnknown
	case p.dir == board.DirPWM:
		if !p.pwmOn {
			return board.DirPWM, gpio.Low.String()
		}
		return board.DirPWM, "pwm_" + strconv.Itoa(int(math.Floor(p.duty*100+1e-9)))
	case p.dir == board.DirOutput:
		return board.DirOutput, p.level.String()
	case p.io != nil:
		return board.DirInput, p.io.Read().String()
	case r != nil:
		level, output, err := r.Pin(p.bcm)
		if err != nil {
			break
		}
		if output {
			return board.DirOutput, level.String()
		}
		return board.DirInput, level.String()
	}
	return board.DirInput, StateUnknown
}

func (p *pin) usedBy() string {
	if p.owner != "" {
		return p.owner
	}
	return p.busBy
}

// Claim implements board.Board, as boardtest does: a bus pin can be claimed
// in its bus's direction by anyone (devices share a bus) and in no other;
// any other pin by one user at a time.
func (b *Board) Claim(bcm int, dir board.Direction, usedBy string) error {
	if usedBy == "" {
		return fmt.Errorf("pi: claim of GPIO%d names no user", bcm)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.pin(bcm)
	if err != nil {
		return err
	}
	switch {
	case p.busDir != "":
		if dir == p.busDir {
			return nil
		}
		return &board.ConflictError{Pin: bcm, UsedBy: p.busBy, Wanted: usedBy}
	case p.owner == "" || p.owner == usedBy:
		p.owner = usedBy
		return nil
	}
	return &board.ConflictError{Pin: bcm, UsedBy: p.owner, Wanted: usedBy}
}

// ReleaseAll implements board.Board: claims are dropped, PWM outputs halted
// and outputs made inputs with the SoC's power-on pull. A PWM pin never
// opened as GPIO stays driven low after its halt (the PWM backend cannot
// make it an input), which is no pulses: a servo goes limp either way.
// Inputs keep their pull and edge detection, so a reset-button watch
// survives. Errors from the hardware are ignored: this is the way to a safe
// state, and it goes on with the other pins.
func (b *Board) ReleaseAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pins {
		if p.busDir != "" {
			continue
		}
		p.owner = ""
		if p.dir == board.DirPWM {
			_ = p.pwm.Halt()
			p.pwmOn = false
			p.dir, p.level = board.DirOutput, gpio.Low
		}
		if p.dir == board.DirOutput && p.io != nil {
			if err := p.io.In(rpi.ResetPull(p.bcm), gpio.NoEdge); err == nil {
				p.dir = board.DirInput
			}
		}
	}
}

// pin returns the GPIO with BCM number bcm; Board.mu must be held.
func (b *Board) pin(bcm int) (*pin, error) {
	p, ok := b.bcm[bcm]
	if !ok {
		return nil, fmt.Errorf("pi: GPIO%d is not on the header: %w", bcm, board.ErrNotFound)
	}
	return p, nil
}

// Hardware implements board.Board. GPIO and PWM pins are opened once and
// tracked, so Pins reports what drivers did with them; bus pins of an
// enabled bus are refused. Buses are Options.Hardware's.
func (b *Board) Hardware() board.Hardware { return hardware{b} }

type hardware struct{ b *Board }

// free returns a header pin that no bus uses; Board.mu must be held.
func (b *Board) free(bcm int) (*pin, error) {
	p, err := b.pin(bcm)
	if err != nil {
		return nil, err
	}
	if p.busDir != "" {
		return nil, fmt.Errorf("pi: GPIO%d is a %s pin of %s", bcm, p.busDir, p.busBy)
	}
	return p, nil
}

func (h hardware) GPIO(bcm int) (gpio.PinIO, error) {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.free(bcm)
	if err != nil {
		return nil, err
	}
	if p.io == nil {
		if b.hw == nil {
			return nil, fmt.Errorf("pi: GPIO%d: no GPIO backend: %w", bcm, board.ErrNotFound)
		}
		io, err := b.hw.GPIO(bcm)
		if err != nil {
			return nil, err
		}
		p.io = io
	}
	t := &trackedPin{b: b, p: p}
	if w, ok := p.io.(gpio.EdgeWatcher); ok {
		return &watchedPin{trackedPin: t, w: w}, nil
	}
	return t, nil
}

func (h hardware) PWM(bcm int) (pwm.Pin, error) {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.free(bcm)
	if err != nil {
		return nil, err
	}
	if p.pwm == nil {
		if b.hw == nil {
			return nil, fmt.Errorf("pi: GPIO%d: no PWM backend: %w", bcm, board.ErrNotFound)
		}
		w, err := b.hw.PWM(bcm)
		if err != nil {
			return nil, err
		}
		p.pwm = w
	}
	return &trackedPWM{b: b, p: p}, nil
}

func (h hardware) I2C(bus int) (i2c.Bus, error) {
	if h.b.hw == nil {
		return nil, fmt.Errorf("pi: I²C bus %d: %w", bus, board.ErrNotFound)
	}
	return h.b.hw.I2C(bus)
}

func (h hardware) SPI(bus, cs int) (spi.Conn, error) {
	if h.b.hw == nil {
		return nil, fmt.Errorf("pi: SPI %d.%d: %w", bus, cs, board.ErrNotFound)
	}
	return h.b.hw.SPI(bus, cs)
}

func (h hardware) CAN(name string) (can.Bus, error) {
	if h.b.hw == nil {
		return nil, fmt.Errorf("pi: CAN %q: %w", name, board.ErrNotFound)
	}
	return h.b.hw.CAN(name)
}

func (h hardware) UART(name string) (uart.Port, error) {
	if h.b.hw == nil {
		return nil, fmt.Errorf("pi: UART %q: %w", name, board.ErrNotFound)
	}
	return h.b.hw.UART(name)
}

// trackedPin is a GPIO opened through the board: it records what it was set
// up as for Pins.
type trackedPin struct {
	b *Board
	p *pin
}

func (t *trackedPin) Name() string     { return "GPIO" + strconv.Itoa(t.p.bcm) }
func (t *trackedPin) Number() int      { return t.p.bcm }
func (t *trackedPin) String() string   { return t.Name() }
func (t *trackedPin) Read() gpio.Level { return t.p.io.Read() }

func (t *trackedPin) In(pull gpio.Pull, edge gpio.Edge) error {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	t.leavePWM()
	if err := t.p.io.In(pull, edge); err != nil {
		return err
	}
	t.p.dir = board.DirInput
	return nil
}

func (t *trackedPin) Out(l gpio.Level) error {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	t.leavePWM()
	if err := t.p.io.Out(l); err != nil {
		return err
	}
	t.p.dir, t.p.level = board.DirOutput, l
	return nil
}

// leavePWM stops a PWM output before the pin changes function, as
// switching a Pi pin's function does; Board.mu must be held.
func (t *trackedPin) leavePWM() {
	if t.p.dir == board.DirPWM && t.p.pwm != nil {
		_ = t.p.pwm.Halt()
		t.p.pwmOn = false
	}
}

// watchedPin is a trackedPin whose backend reports edges.
type watchedPin struct {
	*trackedPin
	w gpio.EdgeWatcher
}

func (w *watchedPin) WatchEdges(f func(gpio.EdgeEvent)) (stop func()) { return w.w.WatchEdges(f) }

// trackedPWM is a PWM output opened through the board.
type trackedPWM struct {
	b *Board
	p *pin
}

func (t *trackedPWM) String() string { return "GPIO" + strconv.Itoa(t.p.bcm) }

func (t *trackedPWM) PWM(duty, freqHz float64) error {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if err := t.p.pwm.PWM(duty, freqHz); err != nil {
		return err
	}
	t.p.dir, t.p.duty, t.p.pwmOn = board.DirPWM, duty, true
	return nil
}

func (t *trackedPWM) Halt() error {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if err := t.p.pwm.Halt(); err != nil {
		return err
	}
	t.p.pwmOn = false
	return nil
}

// firstIPv4 returns the first non-loopback IPv4 address of the machine, or
// "" when it has none.
func firstIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

var (
	_ board.Board      = (*Board)(nil)
	_ camera.Provider  = (*Board)(nil)
	_ board.Hardware   = hardware{}
	_ gpio.PinIO       = (*trackedPin)(nil)
	_ gpio.EdgeWatcher = (*watchedPin)(nil)
	_ pwm.Pin          = (*trackedPWM)(nil)
)
