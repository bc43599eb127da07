package simboard

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/boardtest"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/can/cantest"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/device/i2cid"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin"
	"github.com/saint-os/saint/sim/twin/ina219"
	"github.com/saint-os/saint/sim/twin/mpu6050"
	"github.com/saint-os/saint/sim/twin/pca9685"
	"github.com/saint-os/saint/sim/twin/qmi8658"
	"github.com/saint-os/saint/sim/twin/ssd1306"
)

// Profile names what is wired to a simulated board; see the package doc.
type Profile string

// Profiles.
const (
	Head    Profile = "head"
	Arms    Profile = "arms"
	Tracks  Profile = "tracks"
	Console Profile = "console"
	Balance Profile = "balance"
	Bare    Profile = "bare"
	// ArmsCAN is an arm on torque-controlled MIT-mode CAN actuators: the
	// arms profile with a CAN interface for the joints.
	ArmsCAN Profile = "arms_can"
	// LimbCAN is a humanoid limb's node (the limb role): its joints'
	// MIT-mode actuators on can0 and nothing else.
	LimbCAN Profile = "limb_can"
)

// Profiles returns every profile.
func Profiles() []Profile {
	return []Profile{Head, Arms, ArmsCAN, LimbCAN, Tracks, Console, Balance, Bare}
}

// Pins wired the same on every profile.
const (
	ResetButton = 21 // BCM; to ground, pull-up
)

// Interrupt lines of the IMUs (BCM), driven by the twins when the board has
// an executor (Options.Exec).
const (
	// MPU6050INT is the head IMU's INT pin: data ready, active high.
	MPU6050INT = 17
	// QMI8658INT2 is the balance IMU's INT2 pin, where the QMI8658A drives
	// data ready.
	QMI8658INT2 = 25
)

// PCA9685 addresses on I²C bus 1 (the arms' is at 0x40 too).
const (
	// HeadPCA9685 drives the head's roll servo (channel 0) and jaw
	// (channel 1).
	HeadPCA9685 = 0x40
	// TracksPCA9685 drives the BTS7960 inputs: left RPWM/LPWM on channels
	// 0/1, right on 2/3. The A0 jumper moves it off the INA219's 0x40.
	TracksPCA9685 = 0x41
	// TracksLeftINA219 and TracksRightINA219 measure each bridge's supply
	// current (A2 jumper, and A2+A0).
	TracksLeftINA219  = 0x44
	TracksRightINA219 = 0x45
)

// UART is the name of the Pi's primary UART on GPIO14/15.
const UART = "ttyAMA0"

// Identity of every simulated board.
const (
	Model       = "SAINT simulated Raspberry Pi 4 Model B"
	HardwareRev = "1.0"
	MemoryMB    = 4096
)

// Options configures a Board. Nil Options mean a Bare board with a derived
// identity.
type Options struct {
	// Profile is what is wired to the board; "" means Bare.
	Profile Profile
	// NodeID is the node's id, "sim-head-1". Empty means "sim-" + Serial.
	NodeID string
	// Serial is the Pi's serial number, 16 hex digits. Empty means one
	// derived from NodeID or, without one, from Profile and Seed: give
	// boards that must differ (left and right arms) their own NodeID.
	Serial string
	// MAC is the Ethernet address. Empty means one in the Raspberry Pi 4
	// range (dc:a6:32) derived from the node id.
	MAC string
	// Address is the node's IP address, when known.
	Address string
	// Clock stamps input edges, PWM changes, CAN frames and UART bytes.
	// Nil means a clock that stays at clock.Epoch(). Pass the executor's
	// clock so that events carry the simulation's time.
	Clock clock.Clock
	// Seed varies the metrics between boards and seeds the IMUs' bias and
	// noise; 0 gives nominal metrics and perfect sensors.
	Seed uint64
	// Exec, when set, runs the chips' own timing: the IMUs sample at their
	// output data rate on its clock and drive their data-ready pins
	// (MPU6050INT, QMI8658INT2). Clock defaults to its clock. Without it
	// the IMU pins stay undriven.
	Exec *executor.Executor
}

// Board is a simulated Raspberry Pi. It implements board.Board. Methods are
// safe for concurrent use.
type Board struct {
	base    *boardtest.Board
	profile Profile
	clk     clock.Clock

	i2c1     *twin.I2CBus
	expected []expectedI2C // chips the harness puts on I²C bus 1, by address
	spi00    *qmi8658.Device
	can      map[string]*cantest.Bus
	canDesc  string         // what is on the CAN interfaces
	uart     *uarttest.Port // the Pi's end of ttyAMA0
	uartPeer *uarttest.Port // the device's end
	uartDesc string         // what is on the line, "" for nothing
	camera   bool

	mpu *mpu6050.Device
	pca *pca9685.Device
	ina *ina219.Device
	// trackINA are the tracks' per-bridge supply monitors, left and right.
	trackINA [2]*ina219.Device
	oled     *ssd1306.Device
}

type expectedI2C struct {
	addr uint16
	desc string
}

// Descriptions Scan reports.
const (
	descMPU6050 = i2cid.MPU6050
	descPCA9685 = i2cid.PCA9685
	descINA219  = i2cid.INA219
	descSSD1306 = i2cid.SSD1306
	descQMI8658 = "QMI8658 IMU"
	descCAN     = "CAN bus 500 kbit/s (VESC 68, 56)"
	descCANArm  = "CAN bus 1 Mbit/s (MIT-mode actuators 1-5)"
	descCANLimb = "CAN bus 1 Mbit/s (MIT-mode joint actuators)"
	descFeetech = "Feetech smart-servo bus"
	descIOLink  = "balance IO board link"
	descCamera  = "Raspberry Pi Camera Module (CSI)"
)

// New returns a board wired as o.Profile says, just powered on.
func New(o *Options) (*Board, error) {
	if o == nil {
		o = &Options{}
	}
	prof := o.Profile
	if prof == "" {
		prof = Bare
	}
	b := &Board{
		profile: prof,
		clk:     o.Clock,
		i2c1:    &twin.I2CBus{Name: "i2c-1"},
		can:     map[string]*cantest.Bus{},
	}
	if b.clk == nil && o.Exec != nil {
		b.clk = o.Exec.Clock()
	}
	// The chips time themselves only on a clock that moves: a board given
	// none keeps its stamps at the epoch, and its chips answer every read
	// with fresh values instead.
	chipClock := b.clk
	if b.clk == nil {
		b.clk = clock.NewVirtual(time.Time{})
	}
	b.uart, b.uartPeer = uarttest.Pipe(b.clk)
	// A simulated robot runs for hours: keep no record of the traffic.
	b.uart.SetRecording(false)
	b.uartPeer.SetRecording(false)

	pulls := map[int]gpio.Pull{ResetButton: gpio.PullUp}
	buses := map[int]boardtest.BusPin{
		2:  {Dir: board.DirI2C, Owner: "i2c1"},
		3:  {Dir: board.DirI2C, Owner: "i2c1"},
		14: {Dir: board.DirUART, Owner: "uart0"},
		15: {Dir: board.DirUART, Owner: "uart0"},
	}
	attach := func(addr uint16, desc string, dev twin.I2C) {
		b.i2c1.Attach(addr, dev)
		b.expected = append(b.expected, expectedI2C{addr, desc})
	}
	switch prof {
	case Head:
		mo := &mpu6050.Options{Clock: chipClock, Seed: o.Seed}
		if o.Seed != 0 {
			mo.Noise = mpu6050.TypicalNoise(o.Seed)
		}
		b.mpu = mpu6050.NewWith(mo)
		attach(0x68, descMPU6050, b.mpu)
		// The servos beyond the Pi's two hardware PWM channels.
		b.pca = pca9685.New()
		attach(HeadPCA9685, descPCA9685, b.pca)
		b.camera = true
	case Arms:
		b.pca = pca9685.New()
		b.ina = ina219.NewWith(&ina219.Options{Clock: chipClock})
		attach(0x40, descPCA9685, b.pca)
		attach(0x41, descINA219, b.ina)
		b.uartDesc = descFeetech
	case ArmsCAN:
		// The joints' actuators on can0 (a USB adapter or a CAN HAT's
		// SPI controller, no header pins in use), the gripper's Feetech
		// servo on the UART, the supply monitor on I²C.
		b.ina = ina219.NewWith(&ina219.Options{Clock: chipClock})
		attach(0x41, descINA219, b.ina)
		b.can["can0"] = cantest.New(b.clk)
		b.canDesc = descCANArm
		b.uartDesc = descFeetech
	case LimbCAN:
		b.can["can0"] = cantest.New(b.clk)
		b.canDesc = descCANLimb
	case Tracks:
		b.ina = ina219.NewWith(&ina219.Options{Clock: chipClock})
		attach(0x40, descINA219, b.ina)
		// The bridges' four PWM inputs: more than the Pi's two channels.
		b.pca = pca9685.New()
		attach(TracksPCA9685, descPCA9685, b.pca)
		// Each bridge's supply current (0.01 Ω shunts).
		for side, addr := range [2]uint16{TracksLeftINA219, TracksRightINA219} {
			b.trackINA[side] = ina219.NewWith(&ina219.Options{Clock: chipClock, ShuntOhms: 0.01})
			attach(addr, descINA219, b.trackINA[side])
		}
		// The harness pulls the bridges' enables down (10 kΩ): GPIO5 and 6
		// power up pulled high, and a released or not yet configured pin
		// must leave the bridges off, never braking or driving.
		for _, n := range []int{5, 6} {
			pulls[n] = gpio.PullDown
		}
	case Console:
		b.oled = ssd1306.New()
		attach(0x3C, descSSD1306, b.oled)
		for _, n := range []int{5, 6, 26} {
			pulls[n] = gpio.PullUp
		}
	case Balance:
		qo := &qmi8658.Options{Clock: chipClock, Seed: o.Seed}
		if o.Seed != 0 {
			qo.Noise = qmi8658.TypicalNoise(o.Seed)
		}
		b.spi00 = qmi8658.NewWith(qo)
		for _, n := range []int{8, 9, 10, 11} {
			buses[n] = boardtest.BusPin{Dir: board.DirSPI, Owner: "spi0"}
		}
		b.can["can0"] = cantest.New(b.clk)
		b.canDesc = descCAN
		b.uartDesc = descIOLink
	case Bare:
	default:
		return nil, fmt.Errorf("simboard: unknown profile %q", prof)
	}

	bo := &boardtest.Options{
		Name:    "simboard",
		Info:    identity(o, prof),
		Clock:   b.clk,
		Pulls:   pulls,
		Buses:   buses,
		Metrics: metrics(prof, o.Seed),
		I2C:     map[int]i2c.Bus{1: b.i2c1},
		SPI:     map[boardtest.SPIAddr]spi.Conn{},
		CAN:     map[string]can.Bus{},
		UART:    map[string]uart.Port{UART: b.uart},
	}
	if b.spi00 != nil {
		bo.SPI[boardtest.SPIAddr{Bus: 0, CS: 0}] = b.spi00
	}
	for name, bus := range b.can {
		bo.CAN[name] = bus
	}
	b.base = boardtest.New(bo)
	if o.Exec != nil {
		// The pins exist and are never bus pins, so SetInput cannot fail.
		if b.mpu != nil {
			b.mpu.WireInterrupt(o.Exec, func(l gpio.Level) { _ = b.base.SetInput(MPU6050INT, l) })
		}
		if b.spi00 != nil {
			b.spi00.WireInterrupt(o.Exec, func(l gpio.Level) { _ = b.base.SetInput(QMI8658INT2, l) })
		}
	}
	return b, nil
}

// identity fills in Info from the options.
func identity(o *Options, prof Profile) board.Info {
	id, serial := o.NodeID, o.Serial
	switch {
	case serial == "" && id != "":
		serial = serialFrom(id)
	case serial == "":
		serial = serialFrom(fmt.Sprintf("%s/%d", prof, o.Seed))
	}
	if id == "" {
		id = "sim-" + serial
	}
	mac := o.MAC
	if mac == "" {
		h := fnv.New32a()
		h.Write([]byte(id))
		v := h.Sum32()
		mac = fmt.Sprintf("dc:a6:32:%02x:%02x:%02x", byte(v>>16), byte(v>>8), byte(v))
	}
	return board.Info{
		NodeID:      id,
		Serial:      serial,
		MACAddress:  mac,
		Model:       Model,
		HardwareRev: HardwareRev,
		MemoryMB:    MemoryMB,
		Address:     o.Address,
	}
}

// serialFrom makes a Pi 4 style serial, "10000000" and 8 hex digits.
func serialFrom(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return fmt.Sprintf("10000000%08x", uint32(h.Sum64()))
}

// metrics returns a board's system metrics: nominal for the profile (a head
// streaming its camera works harder), varied by seed within a plausible
// range so that a fleet of boards does not show identical numbers.
func metrics(prof Profile, seed uint64) board.Metrics {
	m := board.Metrics{CPUTempC: 45, CPUUsagePct: 3, MemoryUsagePct: 18}
	if prof == Head {
		m.CPUTempC, m.CPUUsagePct, m.MemoryUsagePct = 52, 14, 24
	}
	if seed != 0 {
		r := rand.New(rand.NewPCG(seed, 0x5a17))
		m.CPUTempC += round1(r.Float64()*6 - 3)
		m.CPUUsagePct += round1(r.Float64() * 3)
		m.MemoryUsagePct += round1(r.Float64()*6 - 3)
	}
	return m
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// Profile returns what is wired to the board.
func (b *Board) Profile() Profile { return b.profile }

// Clock returns the clock the board stamps events with.
func (b *Board) Clock() clock.Clock { return b.clk }

// Info implements board.Board.
func (b *Board) Info() board.Info { return b.base.Info() }

// Pins implements board.Board: the 28 GPIOs of the header in physical order.
func (b *Board) Pins() []board.PinInfo { return b.base.Pins() }

// Metrics implements board.Board.
func (b *Board) Metrics() board.Metrics { return b.base.Metrics() }

// Claim implements board.Board.
func (b *Board) Claim(bcm int, dir board.Direction, usedBy string) error {
	return b.base.Claim(bcm, dir, usedBy)
}

// ReleaseAll implements board.Board.
func (b *Board) ReleaseAll() { b.base.ReleaseAll() }

// Hardware implements board.Board. GPIO and PWM open any header GPIO not
// given to a bus; I2C(1), UART("ttyAMA0") and the profile's SPI and CAN
// buses are present.
func (b *Board) Hardware() board.Hardware { return b.base.Hardware() }

// SetInput drives GPIO bcm to l from outside the board, as a button, encoder
// or receiver wired to it would; watchers see the edge, stamped with the
// board's clock, before SetInput returns.
func (b *Board) SetInput(bcm int, l gpio.Level) error { return b.base.SetInput(bcm, l) }

// SetInputAt is SetInput with the edge stamped at rather than now: the
// physics steps at 1 kHz, but an encoder edge happens when the shaft crosses
// it, and drivers measure speed from those stamps.
func (b *Board) SetInputAt(bcm int, l gpio.Level, at time.Time) error {
	return b.base.SetInputAt(bcm, l, at)
}

// ReleaseInput stops driving GPIO bcm: it reads what its pull resistor gives
// it.
func (b *Board) ReleaseInput(bcm int) error { return b.base.ReleaseInput(bcm) }

// PressReset presses (true) or releases (false) the reset button on GPIO21.
// Pressed, the line is pulled to ground; released, the pull-up takes it
// high. A hard reset is the button held for 5 s of the board's clock.
func (b *Board) PressReset(pressed bool) {
	// GPIO21 exists and is never a bus pin, so these cannot fail.
	if pressed {
		_ = b.base.SetInput(ResetButton, gpio.Low)
	} else {
		_ = b.base.ReleaseInput(ResetButton)
	}
}

// Level returns the level of GPIO bcm: what an output drives (an H-bridge
// enable), what an input reads.
func (b *Board) Level(bcm int) (gpio.Level, error) { return b.base.Level(bcm) }

// SetRecording turns on, or off, the records the test doubles under the
// board keep of what its drivers did (GPIO outputs, PWM settings, CAN
// frames sent; its UART keeps none): tests read them, a simulated robot
// that runs for hours turns them off. Call it before the board's drivers
// run.
func (b *Board) SetRecording(on bool) {
	b.base.SetRecording(on)
	for _, c := range b.can {
		c.SetRecording(on)
	}
}

// PWMState returns the PWM output commanded on GPIO bcm: frequency, duty
// (0–1) and whether it runs. A servo's pulse width is duty / freqHz. A pin
// that is not a PWM output reports 0, 0, false.
func (b *Board) PWMState(bcm int) (freqHz, duty float64, on bool) { return b.base.PWMState(bcm) }

// SetI2CConnected unplugs (false) or plugs back (true) the chip at addr on
// I²C bus 1: unplugged, it stops acknowledging, and Scan reports it as not
// responsive.
func (b *Board) SetI2CConnected(addr uint16, connected bool) error {
	if !b.i2c1.Connect(addr, connected) {
		return fmt.Errorf("simboard: no chip at I²C 1:0x%02x: %w", addr, board.ErrNotFound)
	}
	return nil
}

// UARTPeer returns the device end of the named UART: what the Pi writes
// arrives there, and what is written there arrives at the Pi. A device twin
// (a Feetech servo bus) sits on it.
func (b *Board) UARTPeer(name string) (*uarttest.Port, error) {
	if name != UART {
		return nil, fmt.Errorf("simboard: UART %q: %w", name, board.ErrNotFound)
	}
	return b.uartPeer, nil
}

// CANBus returns the named CAN bus, for twins to join and tests to inspect.
func (b *Board) CANBus(name string) (*cantest.Bus, error) {
	bus, ok := b.can[name]
	if !ok {
		return nil, fmt.Errorf("simboard: CAN %q: %w", name, board.ErrNotFound)
	}
	return bus, nil
}

// MPU6050 returns the head's IMU twin, or nil on other profiles.
func (b *Board) MPU6050() *mpu6050.Device { return b.mpu }

// PCA9685 returns the arms' PWM controller twin, or nil.
func (b *Board) PCA9685() *pca9685.Device { return b.pca }

// INA219 returns the power monitor twin (arms, tracks), or nil.
func (b *Board) INA219() *ina219.Device { return b.ina }

// TrackINA219 returns the tracks board's supply monitor of the left (0) or
// right (1) bridge, or nil on other boards.
func (b *Board) TrackINA219(side int) *ina219.Device { return b.trackINA[side] }

// SSD1306 returns the console's display twin, or nil.
func (b *Board) SSD1306() *ssd1306.Device { return b.oled }

// QMI8658 returns the balance IMU twin on SPI 0.0, or nil.
func (b *Board) QMI8658() *qmi8658.Device { return b.spi00 }

var _ board.Board = (*Board)(nil)
