// Package bts7960 is the simulator's BTS7960 H-bridge: it reads the pins the
// driver in hal/device/bts7960 drives (two PWM inputs, two enables) and
// tells the motor model what the bridge puts across the motor.
//
// Each half-bridge follows its input while its enable is high (input high:
// output at the supply; low: at ground) and floats while its enable is low.
// So, with both enabled, one input pulsing at duty d and the other low
// gives d of the supply across the motor with brake decay between pulses
// (Drive, Duty ±d); both inputs low shorts the motor through the low sides
// (Brake); an enable low lets it turn freely (Coast). Both inputs on at once
// is reported as a Fault, and the outputs turn off as the chips' protection
// would, latched until both enables go low (which resets the chips).
//
// # Physics-facing API
//
//	br := bts7960.New(board, bts7960.Wiring{RPWM: 12, LPWM: 13, REN: 5, LEN: 5})
//	out := br.Output()   // Mode (Coast, Drive, Brake, Fault), Duty −1…1, FreqHz
//	v := out.Duty * supplyVolts   // average terminal voltage while Mode is Drive
//
// Pins is satisfied by *simboard.Board (PWMState and Level). Output reads
// the pins on every call; call it from the physics step.
package bts7960
