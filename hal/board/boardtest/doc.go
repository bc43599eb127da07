// Package boardtest is an in-memory board.Board for unit tests of node and
// role code, and the pin engine the simulated Raspberry Pi (sim/board) is
// built on.
//
// A Board has a set of GPIO pins, each a gpiotest.Pin for its digital side
// and a pwmtest.Pin for PWM, so Pins reports exactly what drivers did to
// them: direction "input", "output" or "pwm", state "high", "low" or
// "pwm_<duty %>". Pins can be given to a bus (I²C, SPI, UART): they then
// report that function and owner, stay in use, and refuse to be opened as
// GPIO. Buses and the peripherals Scan reports are whatever the test
// configures; nothing is probed.
//
// Tests drive inputs with SetInput and ReleaseInput (timestamped with the
// board's clock, so edges carry virtual time) and read outputs with Level and
// PWMState.
package boardtest
