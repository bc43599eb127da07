// Package balance is the balance role of the saul-tee two-wheeled base:
// the 1 kHz balance loop on the QMI8658 IMU, the VESC motor controllers on
// CAN, the Orin's CAN commands and telemetry, and the link to the IO board
// (hal/device/ioboard). Below it: control (the filter and the balance
// cascade) and canmsg (the CAN frames). See Balance and
// docs/roles/balance.md.
package balance
