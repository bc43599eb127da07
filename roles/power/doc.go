// Package power is the supply monitor the motor roles share (arms, tracks):
// an INA219 on the role's I²C bus read at the configured rate, PowerState
// published on "{prefix}/power", warning and cutoff levels with hysteresis
// and hold times, alerts on the console's topic, and a callback that tells
// the role to hold its actuators safe while the supply is at cutoff.
package power
