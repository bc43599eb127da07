// Package pendulum is a simple pendulum: a point mass on a massless rod,
//
//	θ'' = −(g/L)·sin θ − (c/(m·L²))·θ' + τ/(m·L²)
//
// integrated with RK4. It is the simulator's reference model: its energy
// and small-angle period are known in closed form, so its tests check the
// integrator and the world's fixed step against analytic answers (energy
// drift under 0.1 % over 60 s, period within 0.1 % of 2π·√(L/g)).
package pendulum
