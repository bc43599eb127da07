package boardtest

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/rpi"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/gpio/gpiotest"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/pwm"
	"github.com/saint-os/saint/hal/pwm/pwmtest"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/hal/uart"
)

// BusPin gives a pin to a bus function.
type BusPin struct {
	Dir   board.Direction // board.DirI2C, DirSPI, DirUART or DirCAN
	Owner string          // what Pins reports as used_by: "i2c1", "uart0"
}

// SPIAddr names an SPI device: bus and chip select, "0.0" is {0, 0}.
type SPIAddr struct{ Bus, CS int }

// Options configures a Board. Nil Options, or zero fields, give a board with
// the 28 GPIOs of the Raspberry Pi header as inputs with their power-on
// pulls, no buses and no peripherals.
type Options struct {
	// Name prefixes error messages; "boardtest" if empty.
	Name string
	Info board.Info
	// Clock stamps input edges and output records; nil means a clock that
	// stays at clock.Epoch().
	Clock clock.Clock
	// Pins lists the BCM numbers of the board's GPIOs; nil means BCM 0–27.
	// A pin's physical number is its Raspberry Pi header position, or 0 if
	// the header has no such GPIO.
	Pins []int
	// Pulls sets the pull of an input at power-on. Pins not listed get the
	// Pi's reset pull (rpi.ResetPull).
	Pulls map[int]gpio.Pull
	// Buses gives pins to bus functions.
	Buses map[int]BusPin
	// Peripherals is what Scan returns.
	Peripherals []board.Peripheral
	Metrics     board.Metrics

	I2C  map[int]i2c.Bus
	SPI  map[SPIAddr]spi.Conn
	CAN  map[string]can.Bus
	UART map[string]uart.Port
}

// Board is an in-memory board.Board. Methods are safe for concurrent use.
type Board struct {
	name    string
	info    board.Info
	clk     clock.Clock
	periph  []board.Peripheral
	metrics board.Metrics
	i2c     map[int]i2c.Bus
	spi     map[SPIAddr]spi.Conn
	can     map[string]can.Bus
	uart    map[string]uart.Port

	mu   sync.Mutex
	pins []*pin // ordered by physical number, then BCM
	bcm  map[int]*pin
}

// pin is one GPIO. Its fields other than io and pwm are guarded by Board.mu.
type pin struct {
	number int
	bcm    int
	pull   gpio.Pull // power-on pull, restored by ReleaseAll
	bus    BusPin    // Dir == "" unless a bus owns the pin
	io     *gpiotest.Pin
	pwm    *pwmtest.Pin
	isPWM  bool // the pin's function is PWM (since the last PWM call)
	owner  string
}

// New returns a board configured by o.
func New(o *Options) *Board {
	if o == nil {
		o = &Options{}
	}
	b := &Board{
		name:    o.Name,
		info:    o.Info,
		clk:     o.Clock,
		periph:  append([]board.Peripheral(nil), o.Peripherals...),
		metrics: o.Metrics,
		i2c:     copyMap(o.I2C),
		spi:     copyMap(o.SPI),
		can:     copyMap(o.CAN),
		uart:    copyMap(o.UART),
		bcm:     map[int]*pin{},
	}
	if b.name == "" {
		b.name = "boardtest"
	}
	if b.clk == nil {
		b.clk = clock.NewVirtual(time.Time{})
	}
	nums := o.Pins
	if nums == nil {
		for n := 0; n <= 27; n++ {
			nums = append(nums, n)
		}
	}
	for _, n := range nums {
		if _, dup := b.bcm[n]; dup {
			continue
		}
		phys, _ := rpi.Physical(n)
		p := &pin{number: phys, bcm: n, pull: rpi.ResetPull(n), io: gpiotest.NewPin(n, b.clk), pwm: pwmtest.NewPin(b.clk)}
		if pull, ok := o.Pulls[n]; ok {
			p.pull = pull
		}
		if bus, ok := o.Buses[n]; ok {
			p.bus = bus
			p.owner = bus.Owner
			// Idle I²C and UART lines are held high.
			p.pull = gpio.PullUp
		}
		_ = p.io.In(p.pull, gpio.NoEdge)
		b.pins = append(b.pins, p)
		b.bcm[n] = p
	}
	sort.SliceStable(b.pins, func(i, j int) bool {
		if b.pins[i].number != b.pins[j].number {
			return b.pins[i].number < b.pins[j].number
		}
		return b.pins[i].bcm < b.pins[j].bcm
	})
	return b
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Info implements board.Board.
func (b *Board) Info() board.Info { return b.info }

// Metrics implements board.Board.
func (b *Board) Metrics() board.Metrics { return b.metrics }

// Scan implements board.Board: it returns the configured peripherals.
func (b *Board) Scan() []board.Peripheral {
	return append([]board.Peripheral(nil), b.periph...)
}

// Pins implements board.Board.
func (b *Board) Pins() []board.PinInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]board.PinInfo, 0, len(b.pins))
	for _, p := range b.pins {
		dir, state := p.describe()
		out = append(out, board.PinInfo{
			Number:    p.number,
			BCM:       p.bcm,
			Name:      "GPIO" + strconv.Itoa(p.bcm),
			Direction: dir,
			State:     state,
			InUse:     p.owner != "",
			UsedBy:    p.owner,
		})
	}
	return out
}

// describe returns what Pins reports for p; Board.mu must be held.
func (p *pin) describe() (board.Direction, string) {
	switch {
	case p.bus.Dir != "":
		return p.bus.Dir, p.io.Read().String()
	case p.isPWM:
		return board.DirPWM, PWMStateString(p.pwm.State())
	case p.io.IsOutput():
		return board.DirOutput, p.io.Read().String()
	}
	return board.DirInput, p.io.Read().String()
}

// PWMStateString formats a PWM output as NodeGPIOStatus reports it:
// "pwm_<duty %>" with the percentage rounded down (a 1.5 ms servo pulse at
// 50 Hz is 7.5 %, "pwm_7"), or "low" when halted.
func PWMStateString(s pwmtest.Setting) string {
	if !s.On {
		return gpio.Low.String()
	}
	// The epsilon keeps 0.29 × 100 = 28.999… from reading as 28.
	return "pwm_" + strconv.Itoa(int(math.Floor(s.Duty*100+1e-9)))
}

// Claim implements board.Board. A pin given to a bus can be claimed in the
// bus's direction by anyone, since devices share a bus; claiming it in any
// other direction is a conflict with the bus. For other pins dir is not
// checked: Pins reports the direction drivers actually set a pin up in.
func (b *Board) Claim(bcm int, dir board.Direction, usedBy string) error {
	if usedBy == "" {
		return fmt.Errorf("%s: claim of GPIO%d names no user", b.name, bcm)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.pin(bcm)
	if err != nil {
		return err
	}
	switch {
	case p.bus.Dir != "":
		if dir == p.bus.Dir {
			return nil
		}
	case p.owner == "" || p.owner == usedBy:
		p.owner = usedBy
		return nil
	}
	return &board.ConflictError{Pin: bcm, UsedBy: p.owner, Wanted: usedBy}
}

// ReleaseAll implements board.Board: claims are dropped, PWM outputs halted,
// and every output or PWM pin becomes an input with its power-on pull.
// Inputs keep their pull and edge detection, so a reset-button watch
// survives. Bus pins stay with their bus.
func (b *Board) ReleaseAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pins {
		if p.bus.Dir != "" {
			continue
		}
		p.owner = ""
		if p.isPWM {
			_ = p.pwm.Halt()
			p.isPWM = false
			_ = p.io.In(p.pull, gpio.NoEdge)
		} else if p.io.IsOutput() {
			_ = p.io.In(p.pull, gpio.NoEdge)
		}
	}
}

// pin returns the GPIO with BCM number bcm; Board.mu must be held.
func (b *Board) pin(bcm int) (*pin, error) {
	p, ok := b.bcm[bcm]
	if !ok {
		return nil, fmt.Errorf("%s: GPIO%d: %w", b.name, bcm, board.ErrNotFound)
	}
	return p, nil
}

// gpioPin returns a GPIO that is free of bus functions.
func (b *Board) gpioPin(bcm int) (*pin, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.pin(bcm)
	if err != nil {
		return nil, err
	}
	if p.bus.Dir != "" {
		return nil, fmt.Errorf("%s: GPIO%d is a %s pin of %s", b.name, bcm, p.bus.Dir, p.bus.Owner)
	}
	return p, nil
}

// SetInput drives GPIO bcm to l from outside the board (a button, an
// encoder, a receiver), stamped with the board's clock. Watchers of an
// input see the edge before SetInput returns.
func (b *Board) SetInput(bcm int, l gpio.Level) error {
	return b.SetInputAt(bcm, l, b.clk.Now())
}

// SetInputAt is SetInput with the edge stamped at, for devices whose edges
// fall between the simulator's steps (an encoder's A/B edges land at the
// instant the shaft crossed them, not at the end of the step).
func (b *Board) SetInputAt(bcm int, l gpio.Level, at time.Time) error {
	p, err := b.gpioPin(bcm)
	if err != nil {
		return err
	}
	p.io.Set(l, at)
	return nil
}

// ReleaseInput stops driving GPIO bcm from outside: it reads what its pull
// gives it (a released button on a pull-up reads high).
func (b *Board) ReleaseInput(bcm int) error {
	p, err := b.gpioPin(bcm)
	if err != nil {
		return err
	}
	p.io.Release(b.clk.Now())
	return nil
}

// Level returns the level of GPIO bcm: what an output drives, what an input
// reads. A PWM pin reads low.
func (b *Board) Level(bcm int) (gpio.Level, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.pin(bcm)
	if err != nil {
		return gpio.Low, err
	}
	if p.isPWM {
		return gpio.Low, nil
	}
	return p.io.Read(), nil
}

// Outs returns every level GPIO bcm was driven to as an output, oldest
// first (gpiotest.Pin.Outs): what a driver did to a pin it has since
// released.
func (b *Board) Outs(bcm int) ([]gpio.EdgeEvent, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.pin(bcm)
	if err != nil {
		return nil, err
	}
	return p.io.Outs(), nil
}

// PWMState returns the PWM output of GPIO bcm: its frequency, its duty
// (0–1), and whether it is running. A pin that is not a PWM output reports
// 0, 0, false.
func (b *Board) PWMState(bcm int) (freqHz, duty float64, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.bcm[bcm]
	if !ok || !p.isPWM {
		return 0, 0, false
	}
	s := p.pwm.State()
	return s.FreqHz, s.Duty, s.On
}

// SetRecording turns the record of every pin's outputs (the GPIO pins'
// Outs, the PWM pins' History) on, the default, or off, for a simulation
// that runs for hours.
func (b *Board) SetRecording(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pins {
		p.io.SetRecording(on)
		p.pwm.SetRecording(on)
	}
}

// Hardware implements board.Board.
func (b *Board) Hardware() board.Hardware { return hardware{b} }

type hardware struct{ b *Board }

func (h hardware) GPIO(bcm int) (gpio.PinIO, error) {
	p, err := h.b.gpioPin(bcm)
	if err != nil {
		return nil, err
	}
	return &gpioPin{b: h.b, p: p}, nil
}

func (h hardware) PWM(bcm int) (pwm.Pin, error) {
	p, err := h.b.gpioPin(bcm)
	if err != nil {
		return nil, err
	}
	return &pwmPin{b: h.b, p: p}, nil
}

func (h hardware) I2C(bus int) (i2c.Bus, error) {
	if d, ok := h.b.i2c[bus]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: I²C bus %d: %w", h.b.name, bus, board.ErrNotFound)
}

func (h hardware) SPI(bus, cs int) (spi.Conn, error) {
	if d, ok := h.b.spi[SPIAddr{bus, cs}]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: SPI %d.%d: %w", h.b.name, bus, cs, board.ErrNotFound)
}

func (h hardware) CAN(name string) (can.Bus, error) {
	if d, ok := h.b.can[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: CAN %q: %w", h.b.name, name, board.ErrNotFound)
}

func (h hardware) UART(name string) (uart.Port, error) {
	if d, ok := h.b.uart[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: UART %q: %w", h.b.name, name, board.ErrNotFound)
}

// gpioPin is a pin opened as GPIO. Setting it up as an input or output takes
// it out of PWM, as switching a Pi pin's function does.
type gpioPin struct {
	b *Board
	p *pin
}

func (g *gpioPin) Name() string { return g.p.io.Name() }
func (g *gpioPin) Number() int  { return g.p.bcm }
func (g *gpioPin) Read() gpio.Level {
	return g.p.io.Read()
}

func (g *gpioPin) In(pull gpio.Pull, edge gpio.Edge) error {
	g.b.mu.Lock()
	defer g.b.mu.Unlock()
	g.leavePWM()
	return g.p.io.In(pull, edge)
}

func (g *gpioPin) Out(l gpio.Level) error {
	g.b.mu.Lock()
	defer g.b.mu.Unlock()
	g.leavePWM()
	return g.p.io.Out(l)
}

// leavePWM stops a PWM output; Board.mu must be held.
func (g *gpioPin) leavePWM() {
	if g.p.isPWM {
		_ = g.p.pwm.Halt()
		g.p.isPWM = false
	}
}

func (g *gpioPin) WatchEdges(f func(gpio.EdgeEvent)) (stop func()) {
	return g.p.io.WatchEdges(f)
}

func (g *gpioPin) String() string { return g.p.io.Name() }

// pwmPin is a pin opened as PWM.
type pwmPin struct {
	b *Board
	p *pin
}

func (w *pwmPin) PWM(duty, freqHz float64) error {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if err := w.p.pwm.PWM(duty, freqHz); err != nil {
		return fmt.Errorf("%s: GPIO%d: %w", w.b.name, w.p.bcm, err)
	}
	w.p.isPWM = true
	return nil
}

func (w *pwmPin) Halt() error {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	return w.p.pwm.Halt()
}

func (w *pwmPin) String() string { return w.p.io.Name() }

var (
	_ board.Board      = (*Board)(nil)
	_ board.Hardware   = hardware{}
	_ gpio.PinIO       = (*gpioPin)(nil)
	_ gpio.EdgeWatcher = (*gpioPin)(nil)
	_ pwm.Pin          = (*pwmPin)(nil)
)
