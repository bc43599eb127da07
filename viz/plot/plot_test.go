package plot

import (
	"math"
	"slices"
	"testing"
)

func TestSeriesKeepsItsWindow(t *testing.T) {
	s := NewSeries("pitch", "deg", 10)
	for i := 0; i <= 300; i++ {
		s.Add(float64(i)*0.1, float64(i))
	}
	t0, _ := s.Sample(0)
	tn, vn, _ := s.Last()
	if tn != 30 || vn != 300 {
		t.Fatalf("last = (%v, %v), want (30, 300)", tn, vn)
	}
	if tn-t0 > 10+1e-9 || tn-t0 < 10-0.1-1e-9 {
		t.Errorf("held %v s, want 10", tn-t0)
	}
	s.Add(5, 1) // older than the newest: ignored
	s.Add(31, math.NaN())
	if _, v, _ := s.Last(); v != 300 {
		t.Errorf("an old or NaN sample was kept: last value %v", v)
	}
}

func TestValueRangeWidensFlatSignals(t *testing.T) {
	s := NewSeries("x", "", 5)
	s.Add(0, 3)
	s.Add(1, 3)
	if lo, hi := s.ValueRange(2); lo != 2 || hi != 4 {
		t.Errorf("flat range = [%v, %v], want [2, 4]", lo, hi)
	}
	s.Add(2, 10)
	if lo, hi := s.ValueRange(2); lo != 3 || hi != 10 {
		t.Errorf("range = [%v, %v], want [3, 10]", lo, hi)
	}
}

func TestNiceStepAndTicks(t *testing.T) {
	for _, tc := range []struct {
		span float64
		n    int
		want float64
	}{{10, 5, 2}, {10, 4, 5}, {1, 4, 0.5}, {0.3, 3, 0.1}, {37, 4, 10}, {0, 4, 1}} {
		if got := NiceStep(tc.span, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("NiceStep(%v, %d) = %v, want %v", tc.span, tc.n, got, tc.want)
		}
	}
	if got, want := Ticks(-3, 7, 5), []float64{0, 5}; !slices.Equal(got, want) {
		t.Errorf("Ticks = %v, want %v", got, want)
	}
}

func TestAxesMapTimeAndValue(t *testing.T) {
	a := Axes{X: 100, Y: 50, W: 200, H: 100, End: 20, Window: 10, Lo: -1, Hi: 1}
	for _, tc := range []struct{ t, v, px, py float64 }{
		{20, 1, 300, 50}, {10, -1, 100, 150}, {15, 0, 200, 100},
	} {
		if px, py := a.Point(tc.t, tc.v); px != tc.px || py != tc.py {
			t.Errorf("Point(%v, %v) = (%v, %v), want (%v, %v)", tc.t, tc.v, px, py, tc.px, tc.py)
		}
	}
	if got, want := a.TimeTicks(5), []float64{0, 2, 4, 6, 8, 10}; !slices.Equal(got, want) {
		t.Errorf("time ticks = %v, want %v", got, want)
	}
}
