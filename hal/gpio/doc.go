// Package gpio defines general purpose pins: levels, pulls, and inputs that
// report timestamped edges (what RC PWM/PPM decoding and quadrature encoders
// need). Implementations: hal/periph on a Raspberry Pi (GPIO character
// device), the simulator's board, and gpiotest.Pin for tests.
package gpio
