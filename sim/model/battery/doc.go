// Package battery models a battery pack as an open-circuit voltage that
// falls linearly with state of charge behind an internal resistance:
//
//	V = V_oc(SoC) − R_int·I        V_oc = V_empty + (V_full − V_empty)·SoC
//	dSoC/dt = −I / (3600·C)
//
// with I the current drawn (A, negative while charging or regenerating) and
// C the capacity (A·h). A linear V_oc is crude for a LiFePO4 cell's flat
// plateau but gives the right sag under load, which is what the INA219 on
// the tracks and the balance telemetry see.
//
// # Typical values (LiFePO4_8S)
//
// 8 cells in series: 27.2 V full at rest (3.4 V per cell), 24.0 V empty
// (3.0 V), 0.08 Ω pack resistance (about 10 mΩ per cell and wiring),
// 10 A·h. LiPo10S is the saul-tee's 36 V pack: 10 cells, 42.0 V full,
// 33.0 V empty, 0.1 Ω, 8 A·h.
package battery
