// Package bts7960 drives a BTS7960 (IBT-2) H-bridge module: two half-bridge
// chips, each with an input (RPWM, LPWM) that selects its high side (input
// high) or low side (input low) and an inhibit (R_EN, L_EN) that turns the
// half-bridge off when low.
//
// The driver uses sign-magnitude PWM with brake decay: forward is RPWM at
// the duty with LPWM held low, reverse the opposite, so between pulses both
// low sides conduct. Duty 0 and Brake hold both inputs low with the
// bridges enabled (the motor is shorted through the low sides); Coast takes
// the enables low (both outputs float); Disable does the same and refuses
// to drive until Enable, for deadman and emergency stops. The two inputs are
// never driven high together: that puts both outputs on the supply, which
// the simulator's twin reports as a fault.
//
// Many harnesses tie R_EN and L_EN to one GPIO (the tracks profile does);
// leave Pins.LEN nil then. sim/twin/bts7960 reads the same pins back as the
// motor's terminal voltage.
package bts7960
