// Package dcmotor models a brushed DC motor, electrical and mechanical:
//
//	L·di/dt = V − R·i − Kₑ·ω
//	J·dω/dt = Kₜ·i − b·ω − τ_load
//
// with armature resistance R (Ω), inductance L (H), back-EMF constant Kₑ
// (V·s/rad), torque constant Kₜ (N·m/A, equal to Kₑ in SI units), rotor
// inertia J (kg·m²) and viscous friction b (N·m·s/rad). With L = 0 the
// current follows the voltage at once, i = (V − Kₑ·ω)/R, and the motor is
// first order with time constant J·R/(R·b + Kₜ·Kₑ). The equations are
// integrated with RK4 in substeps of at most a quarter of the electrical
// time constant L/R, so that the electrical transient is resolved.
//
// A coasting motor (an H-bridge with its enables low) is open circuit: no
// current flows and the rotor only slows by friction and load.
//
// # Typical values (Gearmotor24V)
//
// A 24 V brushed gearmotor of the size that drives a 20 kg tracked robot
// (the class of the MY1016 or a 63 mm planetary gearmotor, at the motor
// shaft): R = 0.6 Ω, L = 0.6 mH, Kₑ = Kₜ = 0.05 V·s/rad (no-load 480 rad/s
// ≈ 4600 rpm at 24 V, stall 40 A and 2 N·m), J = 5·10⁻⁵ kg·m²,
// b = 10⁻⁵ N·m·s/rad.
package dcmotor
