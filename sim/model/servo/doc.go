// Package servo models a position-controlled servo: the hobby servo of the
// head (a 50 Hz pulse of 500–2500 µs sets the angle) and the smart servo of
// the arms (a goal position set over a bus, with speed and torque limits).
//
// # Model
//
// Inside a servo a brushed motor drives the output through a gearbox, and a
// controller compares the commanded angle with a potentiometer (or magnetic
// encoder). The controller's drive is proportional to the error and
// saturates; the motor gives a torque that falls linearly with speed:
//
//	d = clamp(e'/Eₛ, −1, 1)            e = target − θ
//	e' = 0 for |e| ≤ δ, 2(|e| − δ)·sign e up to 2δ, e beyond   δ: half the deadband
//	τ = τₛ·d − (τₛ/ω₀)·ω                 τ limited to ±τₛ·TorqueLimit
//	(J + Jₗ)·ω' = τ − b·ω + τₑₓₜ          θ' = ω
//
// where τₛ is the stall torque, ω₀ the no-load speed, Eₛ the error that gives
// full drive (a few degrees), J the rotor inertia reflected through the
// gears, Jₗ and b the load's inertia and friction, and τₑₓₜ external torque
// such as gravity. The drive is continuous in the error: it rises from zero
// at the deadband's edge δ and joins the proportional law at 2δ, as a real
// servo's drive starts from its minimum PWM output rather than jumping; a
// step there left loads between off and the first step with no
// equilibrium, and the output hunted across the edge. The −(τₛ/ω₀)·ω term
// is the motor's back-EMF: it caps the speed at ω₀ and brakes the output inside the deadband, where the
// controller shorts the motor. It is integrated with semi-implicit Euler in
// substeps of at most 0.5 ms (the loop's natural frequency is near 100
// rad/s). Hard stops at MinAngle and MaxAngle absorb the motion.
//
// Without a valid pulse (no PWM, a frame rate outside 20–500 Hz, a pulse
// shorter than 300 µs or longer than 2800 µs) an analogue servo's controller
// stops driving and the output is free (limp). Valid pulses beyond the
// 500–2500 µs range are clamped to it.
//
// # Typical values
//
// MG996R (datasheet at 4.8 V): 9.4 kg·cm = 0.92 N·m stall, 0.17 s/60° =
// 6.2 rad/s no load, 5 µs deadband. SG90: 1.8 kg·cm = 0.18 N·m, 0.1 s/60° =
// 10.5 rad/s, 10 µs deadband. Feetech STS3215 at 7.4 V: 19.5 kg·cm =
// 1.91 N·m, 0.222 s/60° = 4.7 rad/s, 4096 steps per turn.
package servo
