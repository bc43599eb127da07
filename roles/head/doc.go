// Package head is the head role: pan, tilt and roll hobby servos (driven
// through hal/device/servo) following HeadCommand on a trapezoidal motion
// profile within the configured limits, the optional jaw servo, the
// MPU6050 on the sensors topic and the camera streamed while enabled. See
// Head and docs/roles/head.md.
package head
