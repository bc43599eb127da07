package mpu6050

import (
	"math"
	"sync"
)

// Register addresses used by the twin.
const (
	RegSmplrtDiv   = 0x19
	RegConfig      = 0x1A
	RegGyroConfig  = 0x1B
	RegAccelConfig = 0x1C
	RegAccelXoutH  = 0x3B
	RegTempOutH    = 0x41
	RegGyroXoutH   = 0x43
	RegPwrMgmt1    = 0x6B
	RegPwrMgmt2    = 0x6C
	RegWhoAmI      = 0x75
)

// WhoAmI is the value of the WHO_AM_I register.
const WhoAmI = 0x68

const (
	pwrDeviceReset = 0x80
	pwrSleep       = 0x40

	dataFirst = RegAccelXoutH
	dataLast  = RegGyroXoutH + 5

	// StandardGravity converts m/s² to g.
	StandardGravity = 9.80665
)

// Sample is what the sensor measures, in SI units in the chip's own axes.
type Sample struct {
	Accel [3]float64 // specific force, m/s²; a chip lying flat at rest reads (0, 0, +g)
	Gyro  [3]float64 // angular rate, rad/s
	TempC float64    // die temperature, °C
}

// Rest is the sample of a chip lying flat and still at 25 °C.
func Rest() Sample {
	return Sample{Accel: [3]float64{0, 0, StandardGravity}, TempC: 25}
}

// Device is an MPU-6050 twin. It implements twin.I2C. The zero value is not
// usable; call New. Methods are safe for concurrent use.
type Device struct {
	mu     sync.Mutex
	regs   [128]byte
	ptr    byte
	sample Sample
}

// New returns a chip just powered on, measuring Rest().
func New() *Device {
	d := &Device{sample: Rest()}
	d.reset()
	return d
}

// reset loads the power-on register values; d.mu must be held or d unshared.
func (d *Device) reset() {
	d.regs = [128]byte{}
	d.regs[RegPwrMgmt1] = pwrSleep
	d.regs[RegWhoAmI] = WhoAmI
}

// Set sets what the sensor measures from now on.
func (d *Device) Set(s Sample) {
	d.mu.Lock()
	d.sample = s
	d.mu.Unlock()
}

// Asleep reports whether PWR_MGMT_1's SLEEP bit is set.
func (d *Device) Asleep() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[RegPwrMgmt1]&pwrSleep != 0
}

// Reg returns the value of register r as a read would see it, without moving
// the register pointer.
func (d *Device) Reg(r byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.latch()
	return d.regs[r&0x7F]
}

// Tx implements twin.I2C: the first byte written sets the register pointer,
// further bytes are written from there on, and reads continue from the
// pointer. Writes to read-only registers are ignored.
func (d *Device) Tx(w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0] & 0x7F
		for _, b := range w[1:] {
			d.write(d.ptr, b)
			d.ptr = (d.ptr + 1) & 0x7F
		}
	}
	if len(r) > 0 {
		d.latch()
		for i := range r {
			r[i] = d.regs[d.ptr]
			d.ptr = (d.ptr + 1) & 0x7F
		}
	}
	return nil
}

func (d *Device) write(reg, v byte) {
	switch {
	case reg == RegWhoAmI, reg >= dataFirst && reg <= dataLast:
		// Read-only.
	case reg == RegPwrMgmt1 && v&pwrDeviceReset != 0:
		d.reset()
	default:
		d.regs[reg] = v
	}
}

// latch copies the current sample into the data registers, scaled by the
// configured ranges; while asleep they keep their last values. d.mu must be
// held.
func (d *Device) latch() {
	if d.regs[RegPwrMgmt1]&pwrSleep != 0 {
		return
	}
	afs := (d.regs[RegAccelConfig] >> 3) & 3
	fs := (d.regs[RegGyroConfig] >> 3) & 3
	// ±2 g is 16384 LSB/g, halving per range step; ±250 °/s is 131 LSB/(°/s).
	accelLSB := 16384 / float64(int(1)<<afs) / StandardGravity
	gyroLSB := 131 / float64(int(1)<<fs) * 180 / math.Pi
	for i := 0; i < 3; i++ {
		put16(d.regs[RegAccelXoutH+2*i:], d.sample.Accel[i]*accelLSB)
		put16(d.regs[RegGyroXoutH+2*i:], d.sample.Gyro[i]*gyroLSB)
	}
	// Datasheet: T(°C) = TEMP_OUT/340 + 36.53.
	put16(d.regs[RegTempOutH:], (d.sample.TempC-36.53)*340)
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
