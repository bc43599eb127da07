// Package ina219 is a register-level twin of the TI INA219 current and power
// monitor on I²C (0x40–0x4F), which the tracks and arms nodes use to watch
// motor current.
//
// It answers like the chip: a register pointer set by the first byte of a
// write, 16-bit big-endian registers that do not auto-increment, the
// configuration register resetting to 0x399F, RST (bit 15) restoring every
// register, and the shunt-voltage, bus-voltage, power and current registers
// computed from the load the physics Set with the datasheet's formulas:
//
//	Current = ShuntVoltage × Calibration / 4096
//	Power   = Current × BusVoltage / 5000
//
// The shunt reading saturates at the PGA range chosen in the configuration
// register, the bus reading at the bus range (16 or 32 V, BRNG). The bus
// voltage register carries CNVR (bit 1) and OVF (bit 0): OVF is set when the
// shunt clipped or the current or power calculation is out of range; CNVR,
// with a clock (Options.Clock), sets one conversion time after it was
// cleared by reading the power register or writing the configuration, the
// time following the BADC/SADC settings (532 µs at 12 bits, up to 68.1 ms at
// 128 averages, datasheet table 5); without a clock conversions are
// instant. Power-down and ADC-off modes freeze the readings and CNVR.
// Pointers past the calibration register read 0.
//
// Not modelled: triggered modes convert continuously, as the continuous
// modes do; averaging does not reduce noise (the twin has none).
//
// Datasheet: TI SBOS448G, section 8.6.
//
// Register map: the twin's own reading of the datasheet, kept apart from the
// driver's. The twin defines its registers, reset values and bit meanings
// itself and imports nothing from the driver (hal/device/ina219, whose map
// is in its registers.go), so a driver test against the twin checks one
// reading against the other; a mistake both readings share would pass.
package ina219
