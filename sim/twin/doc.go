// Package twin holds what the simulator's device twins share: the chip side
// of an I²C bus (I2C), and I2CBus, which routes a controller's transactions
// to the twin at the addressed address, NACKs everywhere else, and delivers
// the general call (address 0x00) to the twins that answer it
// (GeneralCaller).
//
// A twin behaves like its chip on the wire, at register level, so that the
// real chip drivers in hal/device run unchanged against the simulator. Each
// chip has its own package below this one (mpu6050, pca9685, ina219, ssd1306,
// qmi8658, and the motor-side ones) holding one small type. Physics talks to
// a twin through plain methods (an IMU twin's SetMotion, a PWM controller
// twin's Pulse) rather than through the bus.
//
// The IMU twins share the physics' side of an IMU here: Motion (orientation,
// angular rate, linear acceleration in SI units) and its SpecificForce, what
// an accelerometer measures; IMUNoise and Noise, bias and white noise drawn
// from a seeded generator so that a run is repeatable bit for bit. A chip
// that keeps time (an IMU sampling at its output data rate) implements Timed,
// and Interrupt drives its interrupt pin on an executor, waking exactly at
// the instants the chip announces.
//
// SPI twins need no adapter: seen from the controller, one chip select is an
// spi.Conn, so a twin implements spi.Conn directly.
package twin
