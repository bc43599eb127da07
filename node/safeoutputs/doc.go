// Package safeoutputs brings a node's actuators to a safe state from
// outside the node process, after it died or was killed: the step systemd
// runs as saint-node.service's ExecStopPost= (`saint-node safe-outputs`),
// once the process is gone, whatever ended it (a crash, SIGKILL, the
// watchdog's kill of a stalled loop, a clean stop).
//
// A dead process leaves behind whatever it last told the hardware: a
// PCA9685 keeps generating its last PWM duty, an output pin its level
// while a stopped process holds it, a MIT-mode actuator its last torque
// command, and only a VESC times out on its own. Plan reads the adopted
// role's configuration (the node's state directory keeps it) and Apply
// undoes each of those:
//
//   - every PCA9685 in i2c_devices: all channels full off in one write
//     (servos limp, H-bridge PWM inputs low);
//   - every gpio_mapping output (the BTS7960 bridges' enables) and
//     active-high enable: driven low; every active-low enable (a PCA9685's
//     OE): driven high, first;
//   - every gpio_mapping hardware PWM pin: halted, low;
//   - every CAN interface with driver vesc: SET_CURRENT 0 to each
//     configured controller and to the broadcast id (motors coast);
//   - MIT-mode actuators (the actuators section): exit motor mode, no
//     torque.
//
// Each step is one or two bus writes, independent of the others (a step
// that fails does not keep the rest from running) and idempotent: the
// node's own orderly stop has usually done the same already. The wiring
// that keeps a board safe while even this cannot run (a Pi without power
// or with a hung kernel) is described in docs/hardware.md.
package safeoutputs
