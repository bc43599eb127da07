// Package pwm defines pulse-width modulated outputs: servos, H-bridge
// enables, LEDs.
package pwm
