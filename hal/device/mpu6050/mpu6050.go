package mpu6050

import (
	"fmt"
	"math"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
)

// WhoAmI is what the WHO_AM_I register of an MPU-6050 holds.
const WhoAmI = 0x68

// DefaultAddr is the address with AD0 low; 0x69 with AD0 high.
const DefaultAddr = 0x68

// StandardGravity converts g to m/s².
const StandardGravity = 9.80665

// AccelRange is the accelerometer's full scale (ACCEL_CONFIG.AFS_SEL).
type AccelRange uint8

// Accelerometer full scales.
const (
	Accel2G  AccelRange = iota // ±2 g, 16384 LSB/g
	Accel4G                    // ±4 g, 8192 LSB/g
	Accel8G                    // ±8 g, 4096 LSB/g
	Accel16G                   // ±16 g, 2048 LSB/g
)

// String returns "±2g".
func (r AccelRange) String() string { return fmt.Sprintf("±%dg", 2<<r) }

// mPerS2PerLSB is the weight of one count, m/s².
func (r AccelRange) mPerS2PerLSB() float64 {
	return StandardGravity / (16384 / float64(int(1)<<r))
}

// GyroRange is the gyroscope's full scale (GYRO_CONFIG.FS_SEL).
type GyroRange uint8

// Gyroscope full scales.
const (
	Gyro250  GyroRange = iota // ±250 °/s, 131 LSB/(°/s)
	Gyro500                   // ±500 °/s, 65.5 LSB/(°/s)
	Gyro1000                  // ±1000 °/s, 32.8 LSB/(°/s)
	Gyro2000                  // ±2000 °/s, 16.4 LSB/(°/s)
)

// String returns "±250°/s".
func (r GyroRange) String() string { return fmt.Sprintf("±%d°/s", 250<<r) }

// radPerSPerLSB is the weight of one count, rad/s.
func (r GyroRange) radPerSPerLSB() float64 {
	return math.Pi / 180 / (131 / float64(int(1)<<r))
}

// DLPF is the digital low-pass filter setting (CONFIG.DLPF_CFG): the
// bandwidth of accelerometer and gyroscope, and with it the gyroscope
// output rate the sample rate divider divides (8 kHz for DLPF260 and
// DLPFOff, 1 kHz otherwise).
type DLPF uint8

// Filter settings, by accelerometer bandwidth.
const (
	DLPF260 DLPF = iota // 260 Hz accel, 256 Hz gyro; gyro rate 8 kHz
	DLPF184             // 184 Hz / 188 Hz; 1 kHz
	DLPF94              // 94 Hz / 98 Hz
	DLPF44              // 44 Hz / 42 Hz
	DLPF21              // 21 Hz / 20 Hz
	DLPF10              // 10 Hz / 10 Hz
	DLPF5               // 5 Hz / 5 Hz
	DLPFOff             // reserved setting 7: no filter, gyro rate 8 kHz
)

// gyroRateHz is the rate the sample rate divider divides.
func (f DLPF) gyroRateHz() float64 {
	if f == DLPF260 || f == DLPFOff {
		return 8000
	}
	return 1000
}

// Opts configures a Dev. Nil Opts mean DefaultOpts().
type Opts struct {
	// Addr is the I²C address; 0 means DefaultAddr.
	Addr uint16
	// AccelRange and GyroRange are the full scales.
	AccelRange AccelRange
	GyroRange  GyroRange
	// DLPF is the low-pass filter.
	DLPF DLPF
	// SampleRateDivider divides the gyroscope rate: the output data rate
	// is gyro rate / (1 + SampleRateDivider).
	SampleRateDivider uint8
	// DataReadyInterrupt enables the data-ready interrupt on the INT pin.
	DataReadyInterrupt bool
	// LatchInterrupt holds INT active until INT_STATUS is read, instead of
	// a 50 µs pulse per sample.
	LatchInterrupt bool
	// INT is the GPIO the chip's INT pin is wired to, or nil. New sets it
	// as an input reporting rising edges.
	INT gpio.PinIO
}

// DefaultOpts returns the configuration of a head IMU: ±2 g, ±500 °/s, 44 Hz
// bandwidth, 1 kHz / (1 + 9) = 100 Hz output, data-ready interrupt on.
func DefaultOpts() Opts {
	return Opts{
		AccelRange:         Accel2G,
		GyroRange:          Gyro500,
		DLPF:               DLPF44,
		SampleRateDivider:  9,
		DataReadyInterrupt: true,
	}
}

// Sample is one reading in SI units, in the chip's axes.
type Sample struct {
	Accel [3]float64 // specific force, m/s²; flat and still reads (0, 0, +9.81)
	Gyro  [3]float64 // angular rate, rad/s
	TempC float64    // die temperature, °C
}

// Dev is an MPU-6050 on an I²C bus. Methods are not safe for concurrent
// use: one owner (a role's executor) drives it.
type Dev struct {
	bus  i2c.Bus
	addr uint16
	opts Opts
}

// New checks that an MPU-6050 answers on bus at opts.Addr, wakes it and
// configures it. The chip keeps the configuration until it loses power or
// Reset is called.
func New(bus i2c.Bus, opts *Opts) (*Dev, error) {
	if opts == nil {
		o := DefaultOpts()
		opts = &o
	}
	d := &Dev{bus: bus, addr: opts.Addr, opts: *opts}
	if d.addr == 0 {
		d.addr = DefaultAddr
	}
	if d.opts.AccelRange > Accel16G {
		return nil, fmt.Errorf("mpu6050: AccelRange %d out of range 0–3", d.opts.AccelRange)
	}
	if d.opts.GyroRange > Gyro2000 {
		return nil, fmt.Errorf("mpu6050: GyroRange %d out of range 0–3", d.opts.GyroRange)
	}
	if d.opts.DLPF > DLPFOff {
		return nil, fmt.Errorf("mpu6050: DLPF %d out of range 0–7", d.opts.DLPF)
	}
	id, err := d.readReg(regWhoAmI, "WHO_AM_I")
	if err != nil {
		return nil, err
	}
	if id != WhoAmI {
		return nil, &WhoAmIError{Addr: d.addr, Got: id}
	}
	if err := d.write("PWR_MGMT_1", regPwrMgmt1, clkPLLGyroX); err != nil {
		return nil, err
	}
	// SMPLRT_DIV, CONFIG, GYRO_CONFIG and ACCEL_CONFIG are consecutive: one
	// auto-incremented write.
	if err := d.write("SMPLRT_DIV..ACCEL_CONFIG", regSmplrtDiv,
		d.opts.SampleRateDivider, byte(d.opts.DLPF), byte(d.opts.GyroRange)<<3, byte(d.opts.AccelRange)<<3); err != nil {
		return nil, err
	}
	var pinCfg, enable byte
	if d.opts.LatchInterrupt {
		pinCfg = intLatch
	}
	if d.opts.DataReadyInterrupt {
		enable = intDataRdy
	}
	if err := d.write("INT_PIN_CFG, INT_ENABLE", regIntPinCfg, pinCfg, enable); err != nil {
		return nil, err
	}
	if d.opts.INT != nil {
		if err := d.opts.INT.In(gpio.PullDown, gpio.RisingEdge); err != nil {
			return nil, fmt.Errorf("mpu6050: INT pin %s: %w", d.opts.INT.Name(), err)
		}
	}
	return d, nil
}

// WhoAmIError is returned by New when the chip at the address is not an
// MPU-6050.
type WhoAmIError struct {
	Addr uint16
	Got  byte
}

func (e *WhoAmIError) Error() string {
	return fmt.Sprintf("mpu6050: WHO_AM_I at 0x%02x is 0x%02x, want 0x%02x (an MPU-6050)", e.Addr, e.Got, WhoAmI)
}

// String returns "MPU6050{0x68}".
func (d *Dev) String() string { return fmt.Sprintf("MPU6050{0x%02x}", d.addr) }

// INT returns the pin the INT output is wired to, or nil.
func (d *Dev) INT() gpio.PinIO { return d.opts.INT }

// SampleRate returns the output data rate in Hz.
func (d *Dev) SampleRate() float64 {
	return d.opts.DLPF.gyroRateHz() / (1 + float64(d.opts.SampleRateDivider))
}

// Sense reads one sample: accelerometer, temperature and gyroscope in one
// 14-byte burst from ACCEL_XOUT_H.
func (d *Dev) Sense() (Sample, error) {
	var b [14]byte
	if err := d.bus.Tx(d.addr, []byte{regAccelXoutH}, b[:]); err != nil {
		return Sample{}, fmt.Errorf("mpu6050: 0x%02x: reading ACCEL_XOUT..GYRO_ZOUT: %w", d.addr, err)
	}
	return d.decode(b), nil
}

func (d *Dev) decode(b [14]byte) Sample {
	s16 := func(i int) float64 { return float64(int16(uint16(b[i])<<8 | uint16(b[i+1]))) }
	var s Sample
	a, g := d.opts.AccelRange.mPerS2PerLSB(), d.opts.GyroRange.radPerSPerLSB()
	for i := 0; i < 3; i++ {
		s.Accel[i] = s16(2*i) * a
		s.Gyro[i] = s16(8+2*i) * g
	}
	s.TempC = s16(6)/340 + 36.53
	return s
}

// DataReady reads INT_STATUS and reports whether a sample arrived since it
// was last read. Reading it clears it (and a latched INT).
func (d *Dev) DataReady() (bool, error) {
	v, err := d.readReg(regIntStatus, "INT_STATUS")
	return v&intDataRdy != 0, err
}

// SetAccelRange changes the accelerometer's full scale.
func (d *Dev) SetAccelRange(r AccelRange) error {
	if r > Accel16G {
		return fmt.Errorf("mpu6050: AccelRange %d out of range 0–3", r)
	}
	if err := d.write("ACCEL_CONFIG", regAccelConfig, byte(r)<<3); err != nil {
		return err
	}
	d.opts.AccelRange = r
	return nil
}

// SetGyroRange changes the gyroscope's full scale.
func (d *Dev) SetGyroRange(r GyroRange) error {
	if r > Gyro2000 {
		return fmt.Errorf("mpu6050: GyroRange %d out of range 0–3", r)
	}
	if err := d.write("GYRO_CONFIG", regGyroConfig, byte(r)<<3); err != nil {
		return err
	}
	d.opts.GyroRange = r
	return nil
}

// SetRate changes the low-pass filter and the sample rate divider.
func (d *Dev) SetRate(f DLPF, divider uint8) error {
	if f > DLPFOff {
		return fmt.Errorf("mpu6050: DLPF %d out of range 0–7", f)
	}
	if err := d.write("SMPLRT_DIV, CONFIG", regSmplrtDiv, divider, byte(f)); err != nil {
		return err
	}
	d.opts.DLPF, d.opts.SampleRateDivider = f, divider
	return nil
}

// Sleep puts the chip in its low-power sleep: the data registers stop
// updating.
func (d *Dev) Sleep() error { return d.write("PWR_MGMT_1", regPwrMgmt1, pwrSleep|clkPLLGyroX) }

// Wake takes the chip out of sleep.
func (d *Dev) Wake() error { return d.write("PWR_MGMT_1", regPwrMgmt1, clkPLLGyroX) }

// Reset sets DEVICE_RESET: every register returns to its power-on value
// and the chip sleeps. The datasheet asks for 100 ms before the next
// access; call New again after that.
func (d *Dev) Reset() error { return d.write("PWR_MGMT_1", regPwrMgmt1, pwrDeviceReset) }

func (d *Dev) readReg(reg byte, name string) (byte, error) {
	var b [1]byte
	if err := d.bus.Tx(d.addr, []byte{reg}, b[:]); err != nil {
		return 0, fmt.Errorf("mpu6050: 0x%02x: reading %s: %w", d.addr, name, err)
	}
	return b[0], nil
}

// write writes vals to consecutive registers from reg.
func (d *Dev) write(name string, reg byte, vals ...byte) error {
	if err := d.bus.Tx(d.addr, append([]byte{reg}, vals...), nil); err != nil {
		return fmt.Errorf("mpu6050: 0x%02x: writing %s: %w", d.addr, name, err)
	}
	return nil
}
