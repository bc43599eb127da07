package ina219

import (
	"fmt"
	"math"

	"github.com/saint-os/saint/hal/i2c"
)

// DefaultAddr is the address with A0 and A1 to ground.
const DefaultAddr = 0x40

// ADC is an ADC resolution or averaging setting (BADC, SADC).
type ADC uint8

// ADC settings and their conversion times.
const (
	ADC9Bit                ADC = 0x0 // 84 µs
	ADC10Bit               ADC = 0x1 // 148 µs
	ADC11Bit               ADC = 0x2 // 276 µs
	ADC12Bit               ADC = 0x3 // 532 µs
	ADCAvg2                ADC = 0x9 // 1.06 ms
	ADCAvg4                ADC = 0xA
	ADCAvg8                ADC = 0xB
	ADCAvg16               ADC = 0xC
	ADCAvg32               ADC = 0xD
	ADCAvg64               ADC = 0xE
	ADCAvg128              ADC = 0xF // 68.10 ms
	modeShuntBusContinuous     = 0x7
)

// Opts configures a Dev. Nil Opts, like zero fields, take the defaults.
type Opts struct {
	// Addr is the I²C address; 0 means DefaultAddr.
	Addr uint16
	// ShuntOhms is the shunt resistor; 0 means 0.1 Ω (the common breakout).
	ShuntOhms float64
	// MaxCurrent is the largest current expected, A; 0 means 3.2 A (320 mV
	// across 0.1 Ω).
	MaxCurrent float64
	// CurrentLSB is the weight of one count of the current register, A;
	// 0 means MaxCurrent / 2¹⁵. The datasheet suggests rounding that up to
	// a round number (100 µA) so that readings are easy to read raw.
	CurrentLSB float64
	// Bus16V selects the 16 V bus range instead of 32 V.
	Bus16V bool
	// BusADC and ShuntADC are the resolution or averaging; the zero value
	// (ADC9Bit) is replaced by ADC12Bit, the reset value.
	BusADC, ShuntADC ADC
}

// Reading is one measurement in SI units.
type Reading struct {
	BusVoltage   float64 // V, IN- to ground
	ShuntVoltage float64 // V, IN+ to IN-; negative when current flows backwards
	Current      float64 // A
	Power        float64 // W
	// Ready is CNVR: a conversion completed since the power register was
	// last read (or the configuration written).
	Ready bool
	// Overflow is OVF: the current or power calculation overflowed; the
	// readings are not to be trusted.
	Overflow bool
}

// Dev is an INA219 on an I²C bus. Methods are not safe for concurrent use.
type Dev struct {
	bus        i2c.Bus
	addr       uint16
	config     uint16
	cal        uint16
	currentLSB float64 // A
}

// New configures and calibrates the INA219 at opts.Addr on bus.
func New(bus i2c.Bus, opts *Opts) (*Dev, error) {
	if opts == nil {
		opts = &Opts{}
	}
	o := *opts
	if o.Addr == 0 {
		o.Addr = DefaultAddr
	}
	if o.ShuntOhms == 0 {
		o.ShuntOhms = 0.1
	}
	if o.MaxCurrent == 0 {
		o.MaxCurrent = 3.2
	}
	if o.BusADC == 0 {
		o.BusADC = ADC12Bit
	}
	if o.ShuntADC == 0 {
		o.ShuntADC = ADC12Bit
	}
	if !(o.ShuntOhms > 0) || math.IsInf(o.ShuntOhms, 0) {
		return nil, fmt.Errorf("ina219: ShuntOhms %v: want a positive resistance", o.ShuntOhms)
	}
	if !(o.MaxCurrent > 0) || math.IsInf(o.MaxCurrent, 0) {
		return nil, fmt.Errorf("ina219: MaxCurrent %v: want a positive current", o.MaxCurrent)
	}
	for _, a := range []ADC{o.BusADC, o.ShuntADC} {
		if a > ADCAvg128 || (a > ADC12Bit && a < ADCAvg2) {
			return nil, fmt.Errorf("ina219: ADC setting %#x: want 0x0–0x3 or 0x9–0xF", a)
		}
	}
	// PGA: the smallest of ±40 mV × 1, 2, 4, 8 that holds MaxCurrent.
	vshunt := o.MaxCurrent * o.ShuntOhms
	pg := -1
	for g := 0; g < 4; g++ {
		if vshunt <= 0.04*float64(int(1)<<g)*(1+1e-9) {
			pg = g
			break
		}
	}
	if pg < 0 {
		return nil, fmt.Errorf("ina219: MaxCurrent %v A through %v Ω is %.0f mV, beyond the ±320 mV shunt range", o.MaxCurrent, o.ShuntOhms, vshunt*1e3)
	}
	lsb := o.CurrentLSB
	if lsb == 0 {
		lsb = o.MaxCurrent / 32768
	}
	if !(lsb >= o.MaxCurrent/32768*(1-1e-9)) || math.IsInf(lsb, 0) {
		return nil, fmt.Errorf("ina219: CurrentLSB %v A: want at least MaxCurrent / 32768 = %v A", lsb, o.MaxCurrent/32768)
	}
	cal := math.Trunc(0.04096/(lsb*o.ShuntOhms) + 1e-9)
	if cal > 0xFFFE {
		return nil, fmt.Errorf("ina219: calibration %v does not fit 16 bits: MaxCurrent %v A is too small for %v Ω", cal, o.MaxCurrent, o.ShuntOhms)
	}
	d := &Dev{bus: bus, addr: o.Addr, cal: uint16(cal) &^ 1} // bit 0 is void
	if d.cal == 0 {
		return nil, fmt.Errorf("ina219: calibration rounds to 0: MaxCurrent %v A is too large for %v Ω", o.MaxCurrent, o.ShuntOhms)
	}
	d.currentLSB = 0.04096 / (float64(d.cal) * o.ShuntOhms)
	d.config = uint16(pg)<<11 | uint16(o.BusADC)<<7 | uint16(o.ShuntADC)<<3 | modeShuntBusContinuous
	if !o.Bus16V {
		d.config |= 0x2000
	}
	if err := d.write("configuration", regConfig, d.config); err != nil {
		return nil, err
	}
	if err := d.write("calibration", regCalibration, d.cal); err != nil {
		return nil, err
	}
	return d, nil
}

// String returns "INA219{0x40}".
func (d *Dev) String() string { return fmt.Sprintf("INA219{0x%02x}", d.addr) }

// Calibration returns the calibration register value New wrote.
func (d *Dev) Calibration() uint16 { return d.cal }

// CurrentLSB returns the weight of one count of the current register, A.
func (d *Dev) CurrentLSB() float64 { return d.currentLSB }

// Sense reads bus voltage (with CNVR and OVF), shunt voltage, current and
// power, in that order.
func (d *Dev) Sense() (Reading, error) {
	var r Reading
	bus, err := d.read("bus voltage", regBus)
	if err != nil {
		return r, err
	}
	r.BusVoltage = float64(bus>>3) * 4e-3
	r.Ready = bus&2 != 0
	r.Overflow = bus&1 != 0
	shunt, err := d.read("shunt voltage", regShunt)
	if err != nil {
		return r, err
	}
	r.ShuntVoltage = float64(int16(shunt)) * 10e-6
	cur, err := d.read("current", regCurrent)
	if err != nil {
		return r, err
	}
	r.Current = float64(int16(cur)) * d.currentLSB
	pow, err := d.read("power", regPower)
	if err != nil {
		return r, err
	}
	r.Power = float64(pow) * 20 * d.currentLSB
	return r, nil
}

// Reset sets RST: every register returns to its reset value, calibration
// to 0. Call New again to measure current.
func (d *Dev) Reset() error { return d.write("configuration", regConfig, 0x8000) }

// PowerDown stops the ADCs (MODE = 0).
func (d *Dev) PowerDown() error {
	return d.write("configuration", regConfig, d.config&^7)
}

// Resume restarts continuous conversions after PowerDown.
func (d *Dev) Resume() error { return d.write("configuration", regConfig, d.config) }

func (d *Dev) read(name string, reg byte) (uint16, error) {
	var b [2]byte
	if err := d.bus.Tx(d.addr, []byte{reg}, b[:]); err != nil {
		return 0, fmt.Errorf("ina219: 0x%02x: reading %s: %w", d.addr, name, err)
	}
	return uint16(b[0])<<8 | uint16(b[1]), nil
}

func (d *Dev) write(name string, reg byte, v uint16) error {
	if err := d.bus.Tx(d.addr, []byte{reg, byte(v >> 8), byte(v)}, nil); err != nil {
		return fmt.Errorf("ina219: 0x%02x: writing %s: %w", d.addr, name, err)
	}
	return nil
}
