// Package twin holds what the simulator's device twins share: the chip side
// of an I²C bus (I2C), and I2CBus, which routes a controller's transactions
// to the twin at the addressed address and NACKs everywhere else.
//
// A twin behaves like its chip on the wire, at register level, so that the
// real chip drivers in hal/device run unchanged against the simulator. Each
// chip has its own package below this one (mpu6050, pca9685, ina219, ssd1306,
// qmi8658) holding one small type. A twin starts minimal (identification and
// the registers its driver configures) and grows towards the full register
// map as the simulator needs it; physics talks to it through plain methods
// (an IMU twin's Set, a PWM controller twin's Pulse) rather than through the
// bus.
//
// SPI twins need no adapter: seen from the controller, one chip select is an
// spi.Conn, so a twin implements spi.Conn directly.
package twin
