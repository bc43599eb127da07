// Package pwmtest is a fake PWM output that remembers what it was told to do.
//
// The simulator uses the same Pin for the board's PWM outputs, so its physics
// reads the pulse a servo is commanded to from the same place a unit test
// does.
package pwmtest
