// Package ina219 drives a TI INA219 bus-voltage, current and power monitor
// on I²C, written against hal/i2c so that it runs on a Raspberry Pi and,
// unchanged, on the simulator's twin (sim/twin/ina219).
//
// New writes the configuration register (bus range, PGA gain, ADC
// resolution, continuous shunt-and-bus mode) and the calibration register
// computed from the largest current expected and the shunt, as the
// datasheet's programming example does (section 8.5.1):
//
//	Current_LSB = MaxCurrent / 2¹⁵
//	Cal         = trunc(0.04096 / (Current_LSB × R_shunt))
//	Power_LSB   = 20 × Current_LSB
//
// The current LSB used to scale readings is recomputed from the Cal actually
// written, so rounding in Cal does not bias the readings. The PGA gain is
// the smallest range (±40, 80, 160 or 320 mV) that holds MaxCurrent across
// the shunt.
//
// Sense reads the bus voltage register first (with its CNVR conversion-ready
// and OVF overflow flags), then shunt voltage, current and power; reading
// power clears CNVR, so the next Sense's Ready says whether a new conversion
// completed in between.
//
// Datasheet: TI SBOS448G.
package ina219
