package ode

// Deriv writes the time derivative of state x at time t into dxdt. It must
// not keep x or dxdt.
type Deriv func(t float64, x, dxdt []float64)

// RK4 is a fourth-order Runge–Kutta integrator for states of a fixed
// dimension. The zero value is ready; it sizes its scratch space on first
// use.
type RK4 struct {
	k1, k2, k3, k4, tmp []float64
}

// Step advances x (in place) from t by h under f.
func (r *RK4) Step(f Deriv, t float64, x []float64, h float64) {
	n := len(x)
	if len(r.k1) != n {
		r.k1, r.k2, r.k3, r.k4, r.tmp = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	}
	f(t, x, r.k1)
	for i := range x {
		r.tmp[i] = x[i] + h/2*r.k1[i]
	}
	f(t+h/2, r.tmp, r.k2)
	for i := range x {
		r.tmp[i] = x[i] + h/2*r.k2[i]
	}
	f(t+h/2, r.tmp, r.k3)
	for i := range x {
		r.tmp[i] = x[i] + h*r.k3[i]
	}
	f(t+h, r.tmp, r.k4)
	for i := range x {
		x[i] += h / 6 * (r.k1[i] + 2*r.k2[i] + 2*r.k3[i] + r.k4[i])
	}
}

// Substeps returns how many equal substeps of at most maxH split a step of
// length h, at least one.
func Substeps(h, maxH float64) int {
	if !(maxH > 0) || !(h > maxH) {
		return 1
	}
	n := int(h/maxH + 0.999999)
	if n > 1000 {
		n = 1000
	}
	return n
}

// Finite reports whether every value is a finite number.
func Finite(vs ...float64) bool {
	for _, v := range vs {
		if v-v != 0 { // NaN or ±Inf
			return false
		}
	}
	return true
}

// Clamp limits v to [lo, hi]; NaN becomes lo.
func Clamp(v, lo, hi float64) float64 {
	if v > hi {
		return hi
	}
	if v >= lo {
		return v
	}
	return lo
}
