package ina219

import (
	"math"
	"sync"
)

// Register pointers.
const (
	RegConfig      = 0x00
	RegShunt       = 0x01
	RegBus         = 0x02
	RegPower       = 0x03
	RegCurrent     = 0x04
	RegCalibration = 0x05
)

// ConfigReset is the configuration register's power-on value: 32 V bus
// range, ±320 mV shunt range, 12-bit conversions, continuous shunt and bus.
const ConfigReset = 0x399F

// DefaultShuntOhms is the shunt fitted to the common INA219 breakout (R100).
const DefaultShuntOhms = 0.1

const (
	configRST = 0x8000
	cnvr      = 0x0002
)

// Device is an INA219 twin. It implements twin.I2C. The zero value is not
// usable; call New. Methods are safe for concurrent use.
type Device struct {
	shunt float64 // Ω

	mu     sync.Mutex
	ptr    byte
	config uint16
	cal    uint16
	busV   float64
	amps   float64
}

// New returns a chip just powered on with a shunt of shuntOhms (0 means
// DefaultShuntOhms), measuring 0 V and 0 A.
func New(shuntOhms float64) *Device {
	if shuntOhms <= 0 {
		shuntOhms = DefaultShuntOhms
	}
	return &Device{shunt: shuntOhms, config: ConfigReset}
}

// Set sets the load the chip measures: the bus voltage in volts and the
// current through the shunt in amperes (negative when it flows backwards).
func (d *Device) Set(busVolts, amps float64) {
	d.mu.Lock()
	d.busV, d.amps = busVolts, amps
	d.mu.Unlock()
}

// Tx implements twin.I2C: a write sets the pointer and, with two more bytes,
// the register it points at; a read returns the pointed register, MSB first,
// repeating for reads longer than two bytes.
func (d *Device) Tx(w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0]
		if len(w) >= 3 {
			d.write(d.ptr, uint16(w[1])<<8|uint16(w[2]))
		}
	}
	if len(r) > 0 {
		v := d.reg(d.ptr)
		for i := range r {
			r[i] = byte(v >> (8 * (1 - i%2)))
		}
	}
	return nil
}

// Reg returns the 16-bit register at pointer p as a read would.
func (d *Device) Reg(p byte) uint16 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reg(p)
}

func (d *Device) write(p byte, v uint16) {
	switch p {
	case RegConfig:
		if v&configRST != 0 {
			d.config, d.cal = ConfigReset, 0
			return
		}
		d.config = v
	case RegCalibration:
		d.cal = v &^ 1 // FS0 is void and reads 0
	}
}

// reg computes register p; d.mu must be held. Pointers past the last
// register read 0.
func (d *Device) reg(p byte) uint16 {
	switch p {
	case RegConfig:
		return d.config
	case RegShunt:
		return uint16(d.shuntLSB())
	case RegBus:
		return d.busLSB()<<3 | cnvr
	case RegPower:
		return uint16(sat(float64(d.current()) * float64(d.busLSB()) / 5000))
	case RegCurrent:
		return uint16(d.current())
	case RegCalibration:
		return d.cal
	}
	return 0
}

// shuntLSB is the shunt voltage in 10 µV steps, saturated at the PGA range
// (±40 mV × 2^PG).
func (d *Device) shuntLSB() int16 {
	pg := (d.config >> 11) & 3
	limit := float64(int(4000) << pg)
	v := math.Round(d.amps * d.shunt / 10e-6)
	return int16(math.Max(-limit, math.Min(limit, v)))
}

// busLSB is the bus voltage in 4 mV steps, 13 bits.
func (d *Device) busLSB() uint16 {
	v := math.Round(d.busV / 4e-3)
	return uint16(math.Max(0, math.Min(8191, v)))
}

func (d *Device) current() int16 {
	return int16(sat(float64(d.shuntLSB()) * float64(d.cal) / 4096))
}

func sat(v float64) float64 {
	return math.Max(math.MinInt16, math.Min(math.MaxInt16, math.Trunc(v)))
}
