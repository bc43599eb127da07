// Package ode integrates ordinary differential equations for the physics
// models: the classic fourth-order Runge–Kutta method with preallocated
// scratch space, so a model steps at 1 kHz without allocating.
//
// RK4 is the default because its error per unit time falls as the fourth
// power of the step: at 1 kHz an undamped pendulum keeps its energy to a few
// parts in a billion per minute, where the first-order semi-implicit Euler
// method would swing by a few tenths of a percent every cycle.
package ode
