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
// equations (wheels rolling without slip) give
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
// # Wheel–ground contact
//
// The floor pushes each wheel along the heading with F_k (Coulomb friction
// μ, from Params.Friction or the Floor patch under that wheel's contact
// point) and carries N_k = ((M + 2m_w)·g − F_z − M·l·cos θ·θ̇²)/2 (the
// vertical part of the body's angular acceleration and the load transfer in
// turns are neglected). Each wheel's absolute rate ω_k is a state:
//
//	I_w·ω̇_k = τ_k − F_k·r
//	(M + 2m_w)·ẍ + M·l·cos θ·θ̈ − M·l·sin θ·θ̇² = F_L + F_R + F_x
//	(I_z + m_w·W²/2)·ψ̈ = W/2·(F_R − F_L) − b_ψ·ψ̇
//
// with the pitch equation above. A rolling wheel (r·ω_k = ẋ ± ψ̇·W/2)
// takes the F_k the rolling constraint needs; while both roll this is
// exactly the closed form above (so with enough friction the base moves as
// before). When that force exceeds μ·N_k the wheel slides: F_k = ±μ·N_k,
// the sign of its slip, and the motor torque the floor cannot take spins
// the wheel. A slide ends when the slip reverses or falls below 1 µm/s
// within a step; the next evaluation decides whether the grip holds (a
// wheel without inertia, I_w = 0, cannot spin and always rolls). Slip
// reports r·ω_k less the axle's speed over the floor (positive: spinning
// ahead), ContactForce the forces. The IMU and the base's travel follow the
// body's own accelerations, so a spinning wheel shows in the VESC's ERPM
// but not in the IMU or the travel.
//
// # Bumps
//
// Params.Bumps (SetBumps) raise the floor: ridges across it, raised
// cosines h(x) of a height over a length, which the axle follows at its
// own world x (the wheels' contact taken under the axle; a bump must be at
// least MinBumpLength long so that its curvature stays below 1/r and the
// wheel touches it at one point). On the floor's slope α along the heading
// (tan α = h′·cos ψ) and curvature κ along the path, the travel x is
// measured along the floor and Lagrange's equations become
//
//	a₁₁·ẍ + M·l·cos(θ+α)·θ̈ − M·l·sin(θ+α)·θ̇² = Σ F_k + F_t − (M + 2m_w)·g·sin α
//	M·l·cos(θ+α)·ẍ + a₂₂·θ̈ − M·g·l·sin θ − M·l·sin(θ+α)·κ·ẋ² = −Σ τ_k + (push's moment)
//	N = ((M + 2m_w)·(g·cos α + κ·ẋ²) − F_n − M·l·cos(θ+α)·θ̇²)/2 per wheel
//
// (θ + α the body's lean from the floor's normal, F_t and F_n the push
// along and across the floor): the body couples to the travel through its
// lean from the floor, the slope takes its share of the weight, and over
// the curvature the axle's centripetal acceleration κ·ẋ² swings the body
// and loads the wheels (a crest taken fast unloads them, and they slide).
// The ground covered is cos α of the travel; the IMU feels the axle's
// acceleration along and across the floor. On a flat floor the terms
// vanish exactly. Not modelled: a wheel rolling over a curved floor turns
// κ·r more or less than on a flat one (over a whole bump it cancels), the
// wheel's centre following the profile's offset curve rather than the
// profile (on a slope the contact leaves the spot under the axle), and a
// bump under one wheel only (a bump lies across the whole floor).
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
// current loop is far faster than the body): in current mode τ = K_t·I,
// the current limited to what the pack can push against the back-EMF
// (|K_e·ω + R·I| ≤ V_bat, which only a wheel spinning free reaches); in
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
