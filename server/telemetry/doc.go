// Package telemetry forwards the robot's state from the bus to the
// WebSocket API's subscribers: the head, arms, tracks, odometry, balance
// and node topics as their roles publish them, and in the simulator the
// world's ground truth and the console's display.
package telemetry
