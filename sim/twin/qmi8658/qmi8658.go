package qmi8658

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/spi"
	"github.com/saint-os/saint/sim/twin"
)

// Register addresses (QMI8658A datasheet, section 6).
const (
	RegWhoAmI     = 0x00
	RegRevisionID = 0x01
	RegCtrl1      = 0x02
	RegCtrl2      = 0x03 // accelerometer: self-test, full scale, ODR
	RegCtrl3      = 0x04 // gyroscope: self-test, full scale, ODR
	RegCtrl5      = 0x06 // low-pass filters
	RegCtrl7      = 0x08 // sensor enables
	RegCtrl8      = 0x09
	RegCtrl9      = 0x0A // host command
	RegCal1L      = 0x0B
	RegFIFOCtrl   = 0x14
	RegStatusInt  = 0x2D
	RegStatus0    = 0x2E
	RegStatus1    = 0x2F
	RegTimestampL = 0x30
	RegTempL      = 0x33
	RegAXL        = 0x35
	RegGXL        = 0x3B
	RegGZH        = 0x40
	RegReset      = 0x60
)

// Identification values.
const (
	WhoAmI     = 0x05
	RevisionID = 0x7C
)

// Bits.
const (
	readBit = 0x80

	ctrl1AI       = 0x40 // ADDR_AI: the address advances in a burst
	ctrl1BE       = 0x20 // big-endian data; the reset value of CTRL1
	ctrl1INT2     = 0x10 // INT2 is an output
	ctrl1Disable  = 0x01 // internal oscillator off
	ctrl7AEn      = 0x01
	ctrl7GEn      = 0x02
	ctrl7DRDYDis  = 0x20 // DRDY not driven to INT2
	status0ADA    = 0x01
	status0GDA    = 0x02
	statusIntAv   = 0x01
	statusIntDone = 0x80 // CTRL9 command done
	status1Done   = 0x01
	resetCmd      = 0xB0 // written to RegReset: soft reset

	// StandardGravity converts m/s² to g.
	StandardGravity = twin.StandardGravity
)

// Sample is what the sensor measures, in SI units in the chip's own axes.
type Sample = twin.IMUSample

// Rest is the sample of a chip lying flat and still at 25 °C.
func Rest() Sample { return twin.IMURest() }

// Options configures a Device. Nil Options give New's chip.
type Options struct {
	// Clock times the samples; see the package doc. Nil: every read takes
	// a fresh sample and STATUS0 reads data available.
	Clock clock.Clock
	// Seed seeds the noise.
	Seed uint64
	// Noise is the sensor's error model; zero is a perfect sensor.
	Noise twin.IMUNoise
}

// TypicalNoise returns the QMI8658A's datasheet errors at 1 kHz output with
// the filters off (accelerometer 150 µg/√Hz, gyroscope 15 mdps/√Hz over a
// 500 Hz bandwidth) and a bias drawn by seed within ±30 mg and ±3 °/s.
func TypicalNoise(seed uint64) twin.IMUNoise {
	ab, gb := twin.SeededBias(seed, 0.03*StandardGravity, 3*math.Pi/180)
	return twin.IMUNoise{
		AccelRMS:  150e-6 * StandardGravity * math.Sqrt(500),
		GyroRMS:   15e-3 * math.Pi / 180 * math.Sqrt(500),
		TempRMS:   0.05,
		AccelBias: ab,
		GyroBias:  gb,
	}
}

// Device is a QMI8658 twin on one chip select. It implements spi.Conn and
// twin.Timed. The zero value is not usable; call New. Methods are safe for
// concurrent use.
type Device struct {
	clk   clock.Clock
	noise *twin.Noise

	mu     sync.Mutex
	regs   [128]byte
	sample Sample

	running  bool
	epoch    time.Time
	index    int64
	stamp    uint32 // TIMESTAMP: samples taken, 24 bits
	active   bool   // INT2 (data ready) asserted
	pulseEnd time.Time
	irq      *twin.Interrupt
}

// New returns a chip just powered on, perfect and without a clock.
func New() *Device { return NewWith(nil) }

// NewWith returns a chip just powered on, configured by o.
func NewWith(o *Options) *Device {
	if o == nil {
		o = &Options{}
	}
	d := &Device{clk: o.Clock, noise: twin.NewNoise(o.Seed, o.Noise), sample: Rest()}
	d.reset()
	return d
}

func (d *Device) reset() {
	d.regs = [128]byte{}
	d.regs[RegWhoAmI] = WhoAmI
	d.regs[RegRevisionID] = RevisionID
	d.regs[RegCtrl1] = ctrl1BE
	d.running, d.active, d.stamp = false, false, 0
}

// Set sets what the sensor measures from now on.
func (d *Device) Set(s Sample) {
	d.mu.Lock()
	d.sample = s
	d.mu.Unlock()
}

// SetMotion sets what the sensor measures from the motion of the body it
// is fixed to, keeping the temperature.
func (d *Device) SetMotion(m twin.Motion) {
	d.mu.Lock()
	d.sample.Accel = m.SpecificForce()
	d.sample.Gyro = m.AngularRate
	d.mu.Unlock()
}

// SetTemperature sets the die temperature, °C.
func (d *Device) SetTemperature(c float64) {
	d.mu.Lock()
	d.sample.TempC = c
	d.mu.Unlock()
}

// WireInterrupt connects INT2, the data-ready output, to out and runs the
// chip on ex's clock. Call it once, before the chip is used.
func (d *Device) WireInterrupt(ex *executor.Executor, out func(gpio.Level)) (stop func()) {
	d.mu.Lock()
	if d.clk == nil {
		d.clk = ex.Clock()
	}
	d.irq = twin.NewInterrupt(ex, d, out)
	irq := d.irq
	d.mu.Unlock()
	irq.Kick()
	return irq.Stop
}

// SampleRate returns the output data rate in Hz, 0 with no sensor enabled.
func (d *Device) SampleRate() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.period()
	if p == 0 {
		return 0
	}
	return 1 / p.Seconds()
}

// period is the sample period the registers configure, 0 when nothing
// samples; d.mu must be held.
func (d *Device) period() time.Duration {
	c7 := d.regs[RegCtrl7]
	if d.regs[RegCtrl1]&ctrl1Disable != 0 || c7&(ctrl7AEn|ctrl7GEn) == 0 {
		return 0
	}
	var hz float64
	if c7&ctrl7GEn != 0 {
		// 6DOF and gyro-only run on the gyroscope's clock: the nominal
		// rates × 0.8968 (7174.4 Hz for code 0).
		code := min(d.regs[RegCtrl3]&0x0F, 8)
		hz = 8000 / float64(int(1)<<code) * 0.8968
	} else {
		switch code := d.regs[RegCtrl2] & 0x0F; {
		case code <= 8:
			hz = 8000 / float64(int(1)<<code)
		case code == 12:
			hz = 128
		case code == 13:
			hz = 21
		case code == 14:
			hz = 11
		case code == 15:
			hz = 3
		default: // reserved codes: the slowest normal rate
			hz = 31.25
		}
	}
	return time.Duration(math.Round(float64(time.Second) / hz))
}

// Advance implements twin.Timed.
func (d *Device) Advance(now time.Time) (gpio.Level, time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advanceTo(now)
	var next time.Time
	if d.running {
		next = d.epoch.Add(time.Duration(d.index+1) * d.period())
		if d.active && d.pulseEnd.Before(next) {
			next = d.pulseEnd
		}
	}
	return gpio.Level(d.active), next, d.running
}

func (d *Device) advanceTo(now time.Time) {
	if !d.running {
		return
	}
	p := d.period()
	if n := int64(now.Sub(d.epoch) / p); n > d.index {
		d.index = n
		d.latch()
		if d.drdyEnabled() {
			d.active = true
			d.pulseEnd = d.epoch.Add(time.Duration(n)*p + p/2)
		}
	}
	if d.active && !now.Before(d.pulseEnd) {
		d.active = false
	}
}

func (d *Device) drdyEnabled() bool {
	return d.regs[RegCtrl1]&ctrl1INT2 != 0 && d.regs[RegCtrl7]&ctrl7DRDYDis == 0
}

func (d *Device) restartClock() {
	d.running = d.clk != nil && d.period() > 0
	if d.running {
		d.epoch, d.index = d.clk.Now(), 0
	}
}

// latch takes a sample into the data registers, with noise, scaled by the
// configured full scales; d.mu must be held.
func (d *Device) latch() {
	c7 := d.regs[RegCtrl7]
	if c7&(ctrl7AEn|ctrl7GEn) == 0 {
		return
	}
	accel, gyro, temp := d.noise.Apply(d.sample.Accel, d.sample.Gyro, d.sample.TempC)
	afs := (d.regs[RegCtrl2] >> 4) & 7
	if afs > 3 {
		afs = 3
	}
	gfs := (d.regs[RegCtrl3] >> 4) & 7
	accelLSB := float64(int(1)<<(14-afs)) / StandardGravity
	gyroLSB := float64(int(2048)>>gfs) * 180 / math.Pi
	for i := 0; i < 3; i++ {
		if c7&ctrl7AEn != 0 {
			put16(d.regs[RegAXL+2*i:], accel[i]*accelLSB)
		}
		if c7&ctrl7GEn != 0 {
			put16(d.regs[RegGXL+2*i:], gyro[i]*gyroLSB)
		}
	}
	put16(d.regs[RegTempL:], temp*256)
	d.stamp = (d.stamp + 1) & 0xFFFFFF
	d.regs[RegTimestampL], d.regs[RegTimestampL+1], d.regs[RegTimestampL+2] = byte(d.stamp), byte(d.stamp>>8), byte(d.stamp>>16)
	if c7&ctrl7AEn != 0 {
		d.regs[RegStatus0] |= status0ADA
	}
	if c7&ctrl7GEn != 0 {
		d.regs[RegStatus0] |= status0GDA
	}
	d.regs[RegStatusInt] |= statusIntAv
}

// put16 stores v rounded and saturated to int16, little-endian as the
// registers are laid out (L at the lower address).
func put16(b []byte, v float64) {
	v = math.Round(v)
	switch {
	case math.IsNaN(v):
		v = 0
	case v > math.MaxInt16:
		v = math.MaxInt16
	case v < math.MinInt16:
		v = math.MinInt16
	}
	u := uint16(int16(v))
	b[0], b[1] = byte(u), byte(u>>8)
}

// Tx implements spi.Conn. r is 0 or len(w) long; its first byte, clocked in
// while the address went out, is 0.
func (d *Device) Tx(w, r []byte) error {
	if len(r) != 0 && len(r) != len(w) {
		return errors.New("qmi8658: read and write lengths differ")
	}
	if len(w) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.clk != nil {
		d.advanceTo(d.clk.Now())
	}
	before := d.active
	addr := w[0] &^ readBit
	read := w[0]&readBit != 0
	if len(r) > 0 {
		r[0] = 0
	}
	if read && d.clk == nil && len(w) > 1 {
		d.latch()
	}
	reconfigured := false
	for i := 1; i < len(w); i++ {
		if read {
			if len(r) > 0 {
				r[i] = d.read(addr)
			}
		} else {
			reconfigured = d.write(addr, w[i]) || reconfigured
		}
		if d.regs[RegCtrl1]&ctrl1AI != 0 {
			addr = (addr + 1) &^ readBit
		}
	}
	if d.irq != nil && (reconfigured || d.active != before) {
		d.irq.Kick()
	}
	return nil
}

// read returns one byte as the bus sees it; d.mu must be held.
func (d *Device) read(addr byte) byte {
	v := d.regs[addr]
	if addr >= RegTempL && addr <= RegGZH && d.regs[RegCtrl1]&ctrl1BE != 0 {
		// Big-endian: each pair reads high byte first.
		// Pairs start at odd addresses: TEMP_L 0x33, AX_L 0x35, ...
		if (addr-RegTempL)%2 == 0 {
			v = d.regs[addr+1]
		} else {
			v = d.regs[addr-1]
		}
	}
	switch {
	case addr >= RegAXL && addr < RegGXL:
		d.regs[RegStatus0] &^= status0ADA
		d.active = false
	case addr >= RegGXL && addr <= RegGZH:
		d.regs[RegStatus0] &^= status0GDA
		d.active = false
	case addr == RegStatusInt:
		d.regs[RegStatusInt] &^= statusIntAv
	}
	if d.clk == nil && addr == RegStatus0 && d.regs[RegCtrl7]&(ctrl7AEn|ctrl7GEn) != 0 {
		v |= d.regs[RegCtrl7] & (ctrl7AEn | ctrl7GEn) // bits line up: aDA = aEN, gDA = gEN
	}
	return v
}

// write applies one register write and reports whether it changed the
// timing or the interrupt configuration; d.mu must be held.
func (d *Device) write(addr, v byte) bool {
	switch {
	case addr == RegReset:
		if v == resetCmd {
			d.reset()
			return true
		}
	case addr == RegCtrl9:
		d.regs[addr] = v
		if v == 0 { // CTRL_CMD_ACK: the host saw the command done
			d.regs[RegStatusInt] &^= statusIntDone
			d.regs[RegStatus1] &^= status1Done
		} else {
			d.regs[RegStatusInt] |= statusIntDone
			d.regs[RegStatus1] |= status1Done
		}
	case addr >= RegCtrl1 && addr <= RegFIFOCtrl:
		old := d.regs[addr]
		d.regs[addr] = v
		if old != v && (addr == RegCtrl1 || addr == RegCtrl2 || addr == RegCtrl3 || addr == RegCtrl7) {
			d.restartClock()
			return true
		}
	}
	return false
}

// Reg returns register addr without side effects.
func (d *Device) Reg(addr byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[addr&^readBit]
}

var (
	_ spi.Conn   = (*Device)(nil)
	_ twin.Timed = (*Device)(nil)
)
