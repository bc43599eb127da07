// Package servo drives a hobby servo: an angle becomes a pulse width on a
// 50 Hz PWM output, on a Raspberry Pi pin or a PCA9685 channel alike, since
// both are a pwm.Pin.
//
// The mapping is linear: the servo's travel (Config.Range degrees, 180 by
// default) spans MinPulse–MaxPulse (500–2500 µs), centred on their midpoint.
// Trim shifts the centre, Reversed flips the direction for a servo mounted
// the other way, and Min/MaxAngle are the mechanical limits of the joint it
// moves: commands beyond them are clamped, so a bad command cannot drive the
// joint into its stop.
//
//	pulse = centre + (reversed ? −1 : 1) × (clamp(angle) + trim) × (MaxPulse − MinPulse) / Range
//
// Angles are in degrees, as the role configurations give them.
package servo
