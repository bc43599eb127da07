// Package joystick reads a Linux joystick (/dev/input/js*) and feeds it to
// the router as the source "joystick": the teleoperation input chain of
// the pi-plus software system (joy_linux_node reading /dev/input/js0,
// then a mapper to control semantics), with the router's routes as the
// mapper.
//
// The joystick API delivers 8-byte js_event records: a 32-bit timestamp
// in milliseconds, a signed 16-bit value, a type (0x01 button, 0x02 axis,
// ORed with 0x80 for the synthetic events that report the initial state
// when the device is opened) and the axis or button number, all in the
// machine's byte order (little-endian on a Raspberry Pi). ParseEvent and
// Decoder read them; AppendEvent writes them, for tests and tools.
//
// A Joystick's reader goroutine opens the device and reads it at the
// edge, posting the events into the executor. There each axis becomes
// "axis_N" normalised to −1..1 (value/32767, clamped) and each button
// "button_N", 0 or 1, numbered from 0 as the kernel numbers them. The
// whole state is submitted to the router on every change and repeated
// every Options.Repeat while the device is open, because the kernel sends
// nothing while the sticks rest and the router times out a silent source.
// When the device goes away (unplugged: ENODEV) the joystick stops
// submitting, so its routes time out and other sources take over, and it
// reopens the device with a backoff timed on the executor's clock.
package joystick
