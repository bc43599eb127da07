// Package uart defines a serial port whose received bytes carry arrival
// timestamps: go.bug.st/serial on a Pi, simulated lines in the simulator.
package uart
