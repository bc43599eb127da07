// Package simboard is the simulated Raspberry Pi 4 a generic node runs on in
// the simulator: a board.Board whose pins, buses and chips behave like a real
// robot's, so node, role and driver code run on it unchanged. The directory
// is sim/board; the package is named simboard so that it does not shadow
// hal/board, which every user of it also imports.
//
// # Profiles
//
// A Profile decides what is wired to the Pi, as the robot's harness would:
//
//	head     MPU6050 IMU at I²C 1:0x68, its INT (data ready) on GPIO17;
//	         pan and tilt servos on GPIO12 and 13 (the two hardware PWM
//	         channels of a Pi 4 and a Pi 5), roll and jaw on channels 0
//	         and 1 of a PCA9685 at 1:0x40, as fixtures/config/roles/head.yaml
//	         maps them; a CSI camera
//	arms     PCA9685 PWM controller at 1:0x40; INA219 power monitor at
//	         1:0x41; a Feetech smart-servo bus on UART ttyAMA0
//	arms_can the arm on torque-controlled MIT-mode actuators: INA219 at
//	         1:0x41; a CAN interface can0 (1 Mbit/s, no header pins) to
//	         the joints' actuators 1–5; the gripper's Feetech servo on
//	         UART ttyAMA0
//	limb_can a humanoid limb (the limb role): a CAN interface can0
//	         (1 Mbit/s) to its joints' MIT-mode actuators, nothing else
//	tracks   BTS7960 H-bridges: left RPWM/LPWM on channels 0/1 of a
//	         PCA9685 at 1:0x41, right on 2/3 (four independent signals,
//	         which a Pi's two PWM channels cannot give),
//	         enables GPIO5 (left) and 6 (right), pulled down by the
//	         harness so a released pin leaves the bridges off; quadrature
//	         encoders on GPIO17/27 (left) and 22/23 (right); INA219 at 1:0x40
//	         (battery), 1:0x44 and 1:0x45 (left and right bridge supply)
//	console  SSD1306 OLED at 1:0x3C; buttons on GPIO5, 6 and 26 (to ground,
//	         inputs with pull-ups)
//	balance  QMI8658 IMU on SPI 0.0, its INT2 (data ready) on GPIO25; a
//	         CAN interface can0 (a USB adapter,
//	         so no header pins) to the VESCs 68 and 56; the IO-board link
//	         on UART ttyAMA0
//	bare     nothing attached
//
// Every profile has a reset button on GPIO21 (input, pull-up, pressing pulls
// it low: PressReset), I²C bus 1 on GPIO2/3 and UART0 (ttyAMA0) on GPIO14/15.
// Balance also gives GPIO8–11 to SPI0 (one chip select, CE0). Pins not wired
// start as inputs with the SoC's power-on pulls (GPIO0–8 up, 9–27 down).
//
// The IMU interrupt pins are chosen clear of every role configuration in
// fixtures/config/roles: head.yaml uses GPIO12 and 13, balance.yaml
// only SPI0 (GPIO8–11), CAN (USB) and UART0; GPIO17 is the usual choice for
// an MPU6050's INT on a Pi, and GPIO25 the free pin next to SPI0. The
// QMI8658A drives data ready on INT2 (CTRL7.DRDY_DIS), so that is the line
// wired; the saul-tee reference calls its data-ready line INT1 on the ESP32,
// a different board. With Options.Exec the twins sample at their output
// data rate on the executor's clock and drive these pins (a pulse per
// sample, as the chips do); without it the pins are not driven and the
// chips answer every read with the physics' latest values.
//
// With Options.Seed the IMUs get their datasheets' typical noise and a bias
// drawn from the seed; with Seed 0 they are perfect.
//
// Devices wired to plain GPIO (H-bridges, encoders, buttons, servos) cannot
// be detected on a real Pi and are not reported by Scan; the simulator's
// physics reads them with PWMState and Level and drives them with SetInput.
//
// # Hardware
//
// The pin engine is hal/board/boardtest: each GPIO is a gpiotest.Pin and a
// pwmtest.Pin, so Pins reports what drivers really did. Every GPIO can run
// PWM independently, as with pigpio's DMA-timed PWM; the Pi's two hardware
// PWM channels (GPIO12/18 share one, 13/19 the other) are not modelled.
//
// I²C bus 1 is a twin.I2CBus: each chip is a register-level twin from
// sim/twin/<chip> (one small type per chip, growing towards the full register
// map), and addresses with no chip do not acknowledge; the general call
// (address 0x00) reaches the chips that answer it (the PCA9685's software
// reset). SPI 0.0 is the QMI8658 twin itself. CAN buses are cantest loopback buses; ttyAMA0 is one end of a
// uarttest.Pipe whose other end (UARTPeer) belongs to the device on the line.
//
// # Scan
//
// Scan probes I²C bus 1 the way i2cdetect -r does, a one-byte read at each
// address from 0x03 to 0x77 through the bus (and so through the twins), and
// names what answers by reading its identification registers: WHO_AM_I for
// an MPU6050, PRE_SCALE for a PCA9685, the configuration register for an
// INA219, the address for an SSD1306. Expected chips that do not answer
// (SetI2CConnected(addr, false)) are reported with Responsive false. SPI,
// CAN, UART and camera peripherals follow the profile.
//
// Everything is deterministic: identity derives from the node id, metrics
// from the profile and Options.Seed, timestamps from Options.Clock.
package simboard
