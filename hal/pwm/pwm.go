package pwm

// Pin is a PWM output: a hardware PWM channel on a Pi, a channel of a
// PCA9685, or a simulated pin.
type Pin interface {
	// PWM drives the pin at freqHz with duty (0 = always low, 1 = always
	// high). A hobby servo takes 50 Hz with a 500–2500 µs pulse:
	// duty = pulse / 20 ms.
	PWM(duty float64, freqHz float64) error
	// Halt stops the output and leaves the pin low.
	Halt() error
}
