package mpu6050

import (
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/sim/twin"
)

// Register addresses.
const (
	RegSelfTestX   = 0x0D
	RegSelfTestA   = 0x10
	RegSmplrtDiv   = 0x19
	RegConfig      = 0x1A
	RegGyroConfig  = 0x1B
	RegAccelConfig = 0x1C
	RegFIFOEn      = 0x23
	RegI2CMstCtrl  = 0x24
	RegI2CSlv4Ctrl = 0x34 // last of the auxiliary I²C master's writable registers
	RegIntPinCfg   = 0x37
	RegIntEnable   = 0x38
	RegIntStatus   = 0x3A
	RegAccelXoutH  = 0x3B
	RegTempOutH    = 0x41
	RegGyroXoutH   = 0x43
	RegI2CSlv0DO   = 0x63
	RegI2CMstDelay = 0x67
	RegSignalReset = 0x68
	RegUserCtrl    = 0x6A
	RegPwrMgmt1    = 0x6B
	RegPwrMgmt2    = 0x6C
	RegFIFOCountH  = 0x72
	RegFIFORW      = 0x74
	RegWhoAmI      = 0x75
)

// WhoAmI is the value of the WHO_AM_I register.
const WhoAmI = 0x68

// Bits.
const (
	pwrDeviceReset = 0x80
	pwrSleep       = 0x40

	intLevelLow  = 0x80 // INT_PIN_CFG: active low
	intLatch     = 0x20 // INT_PIN_CFG: hold INT until cleared
	intReadClear = 0x10 // INT_PIN_CFG: any read clears the status
	dataRdy      = 0x01 // INT_ENABLE / INT_STATUS

	dataFirst = RegAccelXoutH
	dataLast  = RegGyroXoutH + 5

	// PulseWidth is how long INT stays active for each sample when it is
	// not latched.
	PulseWidth = 50 * time.Microsecond

	// StandardGravity converts m/s² to g.
	StandardGravity = twin.StandardGravity
)

// Sample is what the sensor measures, in SI units in the chip's own axes.
type Sample = twin.IMUSample

// Rest is the sample of a chip lying flat and still at 25 °C.
func Rest() Sample { return twin.IMURest() }

// Options configures a Device. Nil Options give New's chip.
type Options struct {
	// Clock times the samples. With a clock, the data registers take a new
	// sample at each tick of the output data rate and INT_STATUS.DATA_RDY
	// tells when one is waiting; without one (nil), every read sees the
	// physics' latest values and DATA_RDY always reads 1 while awake.
	Clock clock.Clock
	// Seed seeds the noise; the same seed and the same reads give the same
	// values.
	Seed uint64
	// Noise is the sensor's error model; the zero value is a perfect
	// sensor. TypicalNoise gives datasheet figures.
	Noise twin.IMUNoise
}

// TypicalNoise returns the MPU-6050's datasheet errors at the 44 Hz DLPF
// setting: accelerometer 400 µg/√Hz, gyroscope 0.005 °/s/√Hz, and a bias
// drawn by seed within ±50 mg and ±5 °/s (the datasheet's zero-g and
// zero-rate offsets after a typical board calibration).
func TypicalNoise(seed uint64) twin.IMUNoise {
	ab, gb := twin.SeededBias(seed, 0.05*StandardGravity, 5*math.Pi/180)
	return twin.IMUNoise{
		AccelRMS:  400e-6 * StandardGravity * math.Sqrt(44),
		GyroRMS:   0.005 * math.Pi / 180 * math.Sqrt(44),
		TempRMS:   0.05,
		AccelBias: ab,
		GyroBias:  gb,
	}
}

// Device is an MPU-6050 twin. It implements twin.I2C and twin.Timed. The
// zero value is not usable; call New. Methods are safe for concurrent use.
type Device struct {
	clk   clock.Clock
	noise *twin.Noise

	mu     sync.Mutex
	regs   [128]byte
	ptr    byte
	sample Sample

	epoch    time.Time // when the sample clock (re)started
	index    int64     // samples taken since epoch
	running  bool      // the sample clock runs (awake, with a clock)
	ready    bool      // INT_STATUS.DATA_RDY
	active   bool      // INT asserted
	pulseEnd time.Time // end of the current pulse when not latched
	irq      *twin.Interrupt
}

// New returns a chip just powered on, measuring Rest(), perfect and
// without a clock.
func New() *Device { return NewWith(nil) }

// NewWith returns a chip just powered on, measuring Rest(), configured by o.
func NewWith(o *Options) *Device {
	if o == nil {
		o = &Options{}
	}
	d := &Device{clk: o.Clock, noise: twin.NewNoise(o.Seed, o.Noise), sample: Rest()}
	d.reset()
	return d
}

// reset loads the power-on register values; d.mu must be held or d unshared.
func (d *Device) reset() {
	d.regs = [128]byte{}
	d.regs[RegPwrMgmt1] = pwrSleep
	d.regs[RegWhoAmI] = WhoAmI
	d.running, d.ready, d.active = false, false, false
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

// Asleep reports whether PWR_MGMT_1's SLEEP bit is set.
func (d *Device) Asleep() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[RegPwrMgmt1]&pwrSleep != 0
}

// SampleRate returns the output data rate the registers configure: the
// gyroscope rate (8 kHz with the DLPF off, 1 kHz with it on) divided by
// 1 + SMPLRT_DIV.
func (d *Device) SampleRate() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return 1 / d.period().Seconds()
}

func (d *Device) period() time.Duration {
	base := time.Millisecond
	if cfg := d.regs[RegConfig] & 7; cfg == 0 || cfg == 7 {
		base = time.Second / 8000
	}
	return base * time.Duration(1+int(d.regs[RegSmplrtDiv]))
}

// Reg returns the value of register r as a read would see it, without moving
// the register pointer or clearing any status.
func (d *Device) Reg(r byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance()
	if d.clk == nil {
		d.latch()
	}
	return d.read(r & 0x7F)
}

// WireInterrupt connects the INT pin to out and runs the chip on ex's
// clock (the Options.Clock, if any, should be that clock): from now on INT
// rises at every sample when INT_ENABLE.DATA_RDY_EN is set. Call it once,
// before the chip is used.
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

// Advance implements twin.Timed.
func (d *Device) Advance(now time.Time) (gpio.Level, time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advanceTo(now)
	var next time.Time
	ok := d.running
	if ok {
		next = d.epoch.Add(time.Duration(d.index+1) * d.period())
		if d.active && d.regs[RegIntPinCfg]&intLatch == 0 && d.pulseEnd.Before(next) {
			next = d.pulseEnd
		}
	}
	return d.level(), next, ok
}

// level is the INT pin's level; d.mu must be held.
func (d *Device) level() gpio.Level {
	return gpio.Level(d.active != (d.regs[RegIntPinCfg]&intLevelLow != 0))
}

// advance brings the sample clock to the clock's now; d.mu must be held.
func (d *Device) advance() {
	if d.clk != nil {
		d.advanceTo(d.clk.Now())
	}
}

func (d *Device) advanceTo(now time.Time) {
	if !d.running {
		return
	}
	p := d.period()
	if n := int64(now.Sub(d.epoch) / p); n > d.index {
		d.index = n
		d.latch()
		d.ready = true
		if d.regs[RegIntEnable]&dataRdy != 0 {
			d.active = true
			d.pulseEnd = d.epoch.Add(time.Duration(n)*p + PulseWidth)
		}
	}
	if d.active && d.regs[RegIntPinCfg]&intLatch == 0 && !now.Before(d.pulseEnd) {
		d.active = false
	}
}

// restartClock starts the sample clock afresh after a wake or a change of
// rate; d.mu must be held.
func (d *Device) restartClock() {
	d.running = d.clk != nil && d.regs[RegPwrMgmt1]&pwrSleep == 0
	if d.running {
		d.epoch, d.index = d.clk.Now(), 0
	}
}

// Tx implements twin.I2C: the first byte written sets the register pointer,
// further bytes are written from there on, and reads continue from the
// pointer. Writes to read-only and reserved registers are ignored; reserved
// registers read 0. The pointer wraps from 0x7F to 0x00.
func (d *Device) Tx(w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance()
	before := d.level()
	reconfigured := false
	if len(w) > 0 {
		d.ptr = w[0] & 0x7F
		for _, b := range w[1:] {
			reconfigured = d.write(d.ptr, b) || reconfigured
			d.ptr = (d.ptr + 1) & 0x7F
		}
	}
	if len(r) > 0 {
		if d.clk == nil {
			d.latch()
		}
		for i := range r {
			r[i] = d.read(d.ptr)
			if d.ptr == RegIntStatus || d.regs[RegIntPinCfg]&intReadClear != 0 {
				d.ready = false
				if d.regs[RegIntPinCfg]&intLatch != 0 {
					d.active = false
				}
			}
			d.ptr = (d.ptr + 1) & 0x7F
		}
	}
	if d.irq != nil && (reconfigured || d.level() != before) {
		d.irq.Kick()
	}
	return nil
}

// read returns register reg as the bus sees it; d.mu must be held.
func (d *Device) read(reg byte) byte {
	if reg == RegIntStatus {
		if d.ready || (d.clk == nil && d.regs[RegPwrMgmt1]&pwrSleep == 0) {
			return dataRdy
		}
		return 0
	}
	return d.regs[reg]
}

// writable reports whether reg holds what is written to it.
func writable(reg byte) bool {
	switch {
	case reg >= RegSelfTestX && reg <= RegSelfTestA,
		reg >= RegSmplrtDiv && reg <= RegAccelConfig,
		reg >= RegFIFOEn && reg <= RegI2CSlv4Ctrl,
		reg == RegIntPinCfg, reg == RegIntEnable,
		reg >= RegI2CSlv0DO && reg <= RegI2CMstDelay,
		reg == RegUserCtrl, reg == RegPwrMgmt1, reg == RegPwrMgmt2:
		return true
	}
	return false
}

// write applies one register write and reports whether it changed the
// timing or the interrupt configuration; d.mu must be held.
func (d *Device) write(reg, v byte) bool {
	switch {
	case reg == RegPwrMgmt1 && v&pwrDeviceReset != 0:
		d.reset()
		return true
	case reg == RegSignalReset:
		// Resets the signal paths: the data registers read 0 until the
		// next sample.
		for i := dataFirst; i <= dataLast; i++ {
			d.regs[i] = 0
		}
		return false
	case !writable(reg):
		return false
	}
	old := d.regs[reg]
	d.regs[reg] = v
	switch reg {
	case RegPwrMgmt1:
		if old&pwrSleep != v&pwrSleep {
			d.restartClock()
			return true
		}
	case RegSmplrtDiv, RegConfig:
		if old != v {
			d.restartClock()
			return true
		}
	case RegIntPinCfg, RegIntEnable:
		return old != v
	}
	return false
}

// latch copies the current sample, with noise, into the data registers,
// scaled by the configured ranges; while asleep they keep their last
// values. d.mu must be held.
func (d *Device) latch() {
	if d.regs[RegPwrMgmt1]&pwrSleep != 0 {
		return
	}
	afs := (d.regs[RegAccelConfig] >> 3) & 3
	fs := (d.regs[RegGyroConfig] >> 3) & 3
	// ±2 g is 16384 LSB/g, halving per range step; ±250 °/s is 131 LSB/(°/s).
	accelLSB := 16384 / float64(int(1)<<afs) / StandardGravity
	gyroLSB := 131 / float64(int(1)<<fs) * 180 / math.Pi
	accel, gyro, temp := d.noise.Apply(d.sample.Accel, d.sample.Gyro, d.sample.TempC)
	for i := 0; i < 3; i++ {
		put16(d.regs[RegAccelXoutH+2*i:], accel[i]*accelLSB)
		put16(d.regs[RegGyroXoutH+2*i:], gyro[i]*gyroLSB)
	}
	// Datasheet: T(°C) = TEMP_OUT/340 + 36.53.
	put16(d.regs[RegTempOutH:], (temp-36.53)*340)
}

// put16 stores v rounded and saturated to int16, big-endian, as the chip's
// ADCs do.
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
	b[0], b[1] = byte(u>>8), byte(u)
}

var _ twin.Timed = (*Device)(nil)
