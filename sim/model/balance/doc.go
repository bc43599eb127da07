// Package balance models the balancing base: a wheeled inverted pendulum
// in the spirit of the saul-tee base (a ~23 kg body on two hub motors driven
// by VESCs on CAN, 36 V pack, QMI8658 IMU on the balance board).
//
// # Model
//
// The body (mass M, centre of mass l above the axle, pitch inertia I_b about
// it) pivots on the axle of two wheels (mass m_w, inertia I_w, radius r,
// W apart). Coordinates: x, the axle's travel along the heading; θ, the
// pitch, positive leaning forward; ψ, the yaw, positive turning left. Each
// hub motor applies its torque τ_k between body and wheel. Lagrange's
// equations (no wheel slip) give
//
//	a₁₁·ẍ + M·l·cos θ·θ̈ − M·l·sin θ·θ̇² = (τ_L + τ_R)/r + F_x
//	M·l·cos θ·ẍ + a₂₂·θ̈ − M·g·l·sin θ = −(τ_L + τ_R) + F_x·l·cos θ − F_z·l·sin θ
//	I_ψ·ψ̈ = W/(2r)·(τ_R − τ_L) − b_ψ·ψ̇
//
// with a₁₁ = M + 2m_w + 2I_w/r², a₂₂ = I_b + M·l², I_ψ = I_z + m_w·W²/2 +
// I_w·W²/(2r²), F a push at the centre of mass and each τ_k less the
// bearing's viscous friction b_w·(φ̇_k − θ̇). The state is integrated with RK4.
// The wheels turn through φ_{L,R} = (x ∓ ψ·W/2)/r; their motors, fixed to
// the body, see φ − θ.
//
// Leaning past RestAngle the body comes to rest on its bumper (the stop is
// inelastic); Fallen reports it.
//
// New leaves the body exactly upright: an unstable equilibrium that nothing
// but a disturbance (ApplyForce, SetPitch, the wheels' torque) breaks, as a
// base held upright for arming stays up until it is let go.
//
// # Motors
//
// Hub motors are modelled as DC motors without inductance (the VESC's
// current loop is far faster than the body): in current mode τ = K_t·I; in
// duty mode I = (d·V_bat − K_e·ω)/R, limited to ±MaxCurrent. The battery
// (sim/model/battery) supplies (R·I² + K_e·ω·I)/V_bat per motor plus the
// electronics' quiescent current and sags under it.
//
// # IMU
//
// The QMI8658 sits h above the axle. Its specific force, in the body frame
// Rz(ψ)·Ry(θ), is the acceleration of that point minus gravity, and its
// rate is (−ψ̇·sin θ, θ̇, ψ̇·cos θ); with a random stream it adds white noise
// (QMI8658 datasheet: gyro 13 mdps/√Hz, accelerometer 150 µg/√Hz; about
// 0.005 rad/s and 0.033 m/s² at a 500 Hz bandwidth) and a constant gyro bias.
//
// # Typical values (Default)
//
// M = 20 kg, l = 0.25 m, I_b = 0.65 kg·m² (a 0.55 × 0.3 m box); 6.5-inch
// hoverboard hub motors: r = 0.0825 m, m_w = 3 kg, I_w = 0.01 kg·m²,
// K_t = K_e = 0.6 (≈ 15 rpm/V), R = 0.3 Ω, 40 A limit, 15 pole pairs;
// W = 0.45 m, I_z = 0.58 kg·m²; a 10S LiPo; rest on the bumper at 30°
// (past the balance role's ±25° tilt cutoff); IMU 0.15 m up.
package balance
