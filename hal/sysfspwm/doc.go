// Package sysfspwm drives hardware PWM through the Linux PWM subsystem's
// sysfs interface, /sys/class/pwm: what a Raspberry Pi gives a process that
// is not root. It implements hal/pwm.
//
// A channel is used the way the kernel documents it
// (Documentation/driver-api/pwm.rst): write the channel number to
// pwmchipN/export, wait for pwmchipN/pwmM to appear, then write period and
// duty_cycle (nanoseconds), polarity ("normal") and enable ("1"/"0");
// unexport it when done. Two details of that interface are handled here:
//
//   - The export race. The kernel creates pwmM at once, but on Raspberry Pi
//     OS a udev rule then gives its files to group gpio: until it has run,
//     a process that is not root gets EACCES (and on a slow boot pwmM
//     itself may show up late). Channel polls until the files are writable,
//     up to Options.ExportTimeout, and then says which file refused.
//   - Period and duty order. The kernel refuses a period shorter than the
//     current duty cycle and a duty cycle longer than the current period, so
//     PWM writes the one that keeps duty ≤ period first.
//
// On a Raspberry Pi the channels come from a device-tree overlay in
// config.txt: dtoverlay=pwm-2chan,pin=12,func=4,pin2=13,func2=4 puts
// GPIO12 and GPIO13 on the two channels of a Pi 0–4's PWM block (pwmchip0,
// channels 0 and 1) and on channels 0 and 1 of a Pi 5's RP1 PWM0 (whose
// channels 2 and 3 are GPIO18 and 19). Host.PWM maps a BCM GPIO to its chip
// and channel by the chip's device (…20c000.pwm for the BCM283x/2711
// block, 1f00098000.pwm for the RP1), and refuses a second GPIO on a
// channel already in use: on a Pi 4 GPIO12 and GPIO18 are one channel and
// cannot carry different signals.
//
// Every path is under Options.Root ("/" on a robot), so the package is
// tested against a fake sysfs tree in a temporary directory
// (sysfspwmtest), including a late pwmM directory and permission errors.
package sysfspwm
