package ina219

import (
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/clock"
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
	configRST  = 0x8000
	configBRNG = 0x2000 // 32 V bus range
	cnvr       = 0x0002
	ovf        = 0x0001
)

// Options configures a Device. Nil Options give New(0).
type Options struct {
	// ShuntOhms is the shunt resistor; 0 means DefaultShuntOhms.
	ShuntOhms float64
	// Clock times the conversions: CNVR sets one conversion time (from the
	// ADC settings) after it was cleared by reading the power register or
	// writing the configuration. Nil: conversions are instant.
	Clock clock.Clock
}

// Device is an INA219 twin. It implements twin.I2C. The zero value is not
// usable; call New. Methods are safe for concurrent use.
type Device struct {
	shunt float64 // Ω
	clk   clock.Clock

	mu      sync.Mutex
	ptr     byte
	config  uint16
	cal     uint16
	busV    float64
	amps    float64
	frozen  [2]float64 // bus volts and amps when the ADCs stopped
	cleared time.Time  // when CNVR was last cleared (with a clock)
}

// New returns a chip just powered on with a shunt of shuntOhms (0 means
// DefaultShuntOhms), measuring 0 V and 0 A.
func New(shuntOhms float64) *Device { return NewWith(&Options{ShuntOhms: shuntOhms}) }

// NewWith returns a chip just powered on, configured by o.
func NewWith(o *Options) *Device {
	if o == nil {
		o = &Options{}
	}
	shunt := o.ShuntOhms
	if !(shunt > 0) || math.IsInf(shunt, 0) {
		shunt = DefaultShuntOhms
	}
	d := &Device{shunt: shunt, clk: o.Clock, config: ConfigReset}
	if d.clk != nil {
		d.cleared = d.clk.Now()
	}
	return d
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
		if d.ptr == RegPower {
			d.clearCNVR()
		}
	}
	return nil
}

// clearCNVR starts a new conversion period; d.mu must be held.
func (d *Device) clearCNVR() {
	if d.clk != nil {
		d.cleared = d.clk.Now()
	}
}

// adcTime is one conversion of an ADC setting (BADC or SADC), datasheet
// table 5.
func adcTime(code uint16) time.Duration {
	if code&8 == 0 {
		return [4]time.Duration{84 * time.Microsecond, 148 * time.Microsecond, 276 * time.Microsecond, 532 * time.Microsecond}[code&3]
	}
	// 0b1000 is 12 bits; 0b1001.. average 2..128 samples of 532 µs.
	return 532 * time.Microsecond << (code & 7)
}

// conversionTime is how long one round of the configured mode takes.
func (d *Device) conversionTime() time.Duration {
	var t time.Duration
	mode := d.config & 7
	if mode&1 != 0 {
		t += adcTime(d.config >> 3 & 0xF)
	}
	if mode&2 != 0 {
		t += adcTime(d.config >> 7 & 0xF)
	}
	return t
}

// converting reports whether the mode runs the ADCs (not power-down or
// ADC off).
func (d *Device) converting() bool { return d.config&3 != 0 }

// load returns the bus voltage and current the ADCs see: the physics'
// values, or those when the ADCs stopped.
func (d *Device) load() (busV, amps float64) {
	if !d.converting() {
		return d.frozen[0], d.frozen[1]
	}
	return d.busV, d.amps
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
		wasConverting := d.converting()
		if v&configRST != 0 {
			d.config, d.cal = ConfigReset, 0
		} else {
			d.config = v &^ 0x4000 // bit 14 is unused and reads 0
		}
		if wasConverting && !d.converting() {
			d.frozen = [2]float64{d.busV, d.amps}
		}
		d.clearCNVR()
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
		v := d.busLSB() << 3
		if d.converting() && (d.clk == nil || d.clk.Now().Sub(d.cleared) >= d.conversionTime()) {
			v |= cnvr
		}
		if d.overflow() {
			v |= ovf
		}
		return v
	case RegPower:
		// Unsigned: the magnitude of current × bus voltage.
		return uint16(math.Min(math.MaxUint16, math.Trunc(math.Abs(float64(d.current()))*float64(d.busLSB())/5000)))
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
	v, _ := d.shuntRaw()
	return v
}

// shuntRaw returns the shunt reading and whether it was clipped at the PGA
// range.
func (d *Device) shuntRaw() (int16, bool) {
	pg := (d.config >> 11) & 3
	limit := float64(int(4000) << pg)
	_, amps := d.load()
	v := math.Round(amps * d.shunt / 10e-6)
	if math.IsNaN(v) {
		v = 0
	}
	return int16(math.Max(-limit, math.Min(limit, v))), math.Abs(v) > limit
}

// busLSB is the bus voltage in 4 mV steps, 13 bits, up to the bus range:
// 16 V with BRNG clear, 32 V (the 13-bit limit) with it set.
func (d *Device) busLSB() uint16 {
	busV, _ := d.load()
	v := math.Round(busV / 4e-3)
	if math.IsNaN(v) {
		v = 0
	}
	top := 8191.0
	if d.config&configBRNG == 0 {
		top = 4000
	}
	return uint16(math.Max(0, math.Min(top, v)))
}

func (d *Device) current() int16 {
	return int16(sat(float64(d.shuntLSB()) * float64(d.cal) / 4096))
}

// overflow is the OVF flag: the shunt reading clipped, or the current or
// power calculation out of range.
func (d *Device) overflow() bool {
	sh, clipped := d.shuntRaw()
	cur := float64(sh) * float64(d.cal) / 4096
	pow := math.Abs(math.Trunc(cur)) * float64(d.busLSB()) / 5000
	return clipped || math.Abs(cur) > math.MaxInt16 || pow > math.MaxUint16
}

func sat(v float64) float64 {
	return math.Max(math.MinInt16, math.Min(math.MaxInt16, math.Trunc(v)))
}
