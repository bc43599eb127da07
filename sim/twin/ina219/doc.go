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
// register. Conversions are always ready (CNVR set); averaging, conversion
// time, OVF and the power-down modes are not modelled yet.
//
// Datasheet: TI SBOS448G, section 8.6.
package ina219
