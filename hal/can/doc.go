// Package can defines a CAN bus (classic frames, standard and extended ids):
// SocketCAN on a Pi, the simulator's bus with VESC twins, and cantest.
package can
