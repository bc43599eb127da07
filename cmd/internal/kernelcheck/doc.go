// Command kernelcheck runs SAINT.OS's real hardware backends against a real
// Linux kernel's drivers and reports, one line per check, whether they
// worked. It is built static (CGO_ENABLED=0) and run inside a virtual
// machine booted with Debian's kernel, where the kernel offers a simulator
// for each bus (docs/rehearsal.md, docs/hardware.md):
//
//   - CAN: hal/socketcan on a vcan interface. The balance base's VESC
//     drivers (hal/device/vesc) and the CAN arm's MIT-mode actuators
//     (hal/device/mitmotor, driven by roles/motor's MITActuators as the arms
//     role does) talk through one raw CAN socket each to their twins
//     (sim/twin/vesc, sim/twin/mitmotor), which answer through a second
//     socket on the same interface.
//   - Camera: hal/v4l2 capturing from vivid, the kernel's virtual video
//     capture driver: frame size, the colours of its colour-bar pattern, and
//     that frames change.
//   - RC receiver: hal/serial on a guest serial port whose other end is a
//     host pseudo-terminal fed SBUS or CRSF frames by sim/twin/rctx; the
//     channels hal/device/rc decodes must be those sent.
//   - INA219: hal/periph's I²C on /dev/i2c-N of i2c-stub, with the chip's
//     registers preset by i2cset; hal/device/ina219 must read the voltages
//     and current they encode, and its configuration and calibration must
//     land in the chip's registers as i2cget reads them.
//
// Each check prints a line
//
//	KERNELCHECK {"name":"can-vesc","ok":true,"detail":"…","duration_ms":412.5}
//
// and the run ends with KERNELCHECK-END and the counts. The exit status is
// 1 when a check failed. Checks whose flag is empty are not run.
package main
