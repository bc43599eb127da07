package ode

import (
	"math"
	"testing"
)

// Exponential decay x' = -x from 1 over 1 s in 1 ms steps matches e^-1 to
// RK4's accuracy (error ~ h⁴).
func TestRK4Exponential(t *testing.T) {
	var r RK4
	x := []float64{1}
	f := func(_ float64, x, d []float64) { d[0] = -x[0] }
	for i := 0; i < 1000; i++ {
		r.Step(f, float64(i)*1e-3, x, 1e-3)
	}
	if err := math.Abs(x[0] - math.Exp(-1)); err > 1e-12 {
		t.Errorf("x(1) = %.15f, want e^-1 = %.15f (error %g)", x[0], math.Exp(-1), err)
	}
}

func TestHelpers(t *testing.T) {
	if Substeps(1e-3, 2.5e-4) != 4 || Substeps(1e-3, 1e-3) != 1 || Substeps(1e-3, 0) != 1 || Substeps(math.NaN(), 1) != 1 {
		t.Error("Substeps")
	}
	if !Finite(1, -2, 0) || Finite(1, math.NaN()) || Finite(math.Inf(-1)) {
		t.Error("Finite")
	}
	if Clamp(math.NaN(), -1, 1) != -1 || Clamp(2, -1, 1) != 1 || Clamp(0.5, -1, 1) != 0.5 {
		t.Error("Clamp")
	}
}
