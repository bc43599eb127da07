package layout

import (
	"math"
	"testing"
)

func TestComputeViewsInsideWindowWithoutOverlap(t *testing.T) {
	for _, size := range [][2]int{{1280, 800}, {640, 400}, {1920, 1080}, {800, 1200}, {300, 200}} {
		l := Compute(size[0], size[1])
		views := map[string]Rect{"header": l.Header, "arena": l.Arena, "status": l.Status, "balance": l.Balance,
			"arms": l.Arms, "head": l.Head, "console": l.Console, "help": l.Help, "plots": l.Plots}
		win := Rect{0, 0, l.Width, l.Height}
		for name, r := range views {
			if r.W <= 0 || r.H <= 0 {
				t.Errorf("%v: %s is empty: %+v", size, name, r)
			}
			if r.X < 0 || r.Y < 0 || r.X+r.W > win.W || r.Y+r.H > win.H {
				t.Errorf("%v: %s %+v outside the window %+v", size, name, r, win)
			}
			for other, o := range views {
				if other != name && overlap(r, o) {
					t.Errorf("%v: %s %+v overlaps %s %+v", size, name, r, other, o)
				}
			}
		}
	}
}

func overlap(a, b Rect) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func TestArenaMapping(t *testing.T) {
	const tol = 1e-9
	a := Arena{Rect: Rect{10, 20, 400, 300}, HalfExtent: 3}
	if got, want := a.Scale(), 300.0/6; math.Abs(got-want) > tol {
		t.Fatalf("scale = %v, want %v", got, want)
	}
	for _, tc := range []struct{ x, y, px, py float64 }{
		{0, 0, 210, 170},
		{1, 0, 260, 170},  // east is right
		{0, 1, 210, 120},  // north is up
		{-3, -3, 60, 320}, // bottom left of the square
	} {
		px, py := a.ToPixel(tc.x, tc.y)
		if math.Abs(px-tc.px) > tol || math.Abs(py-tc.py) > tol {
			t.Errorf("ToPixel(%v, %v) = (%v, %v), want (%v, %v)", tc.x, tc.y, px, py, tc.px, tc.py)
		}
		x, y := a.ToWorld(px, py)
		if math.Abs(x-tc.x) > tol || math.Abs(y-tc.y) > tol {
			t.Errorf("ToWorld(ToPixel(%v, %v)) = (%v, %v)", tc.x, tc.y, x, y)
		}
	}
	if !a.Visible(0, 0) || a.Visible(10, 0) {
		t.Error("origin should be visible and 10 m east not")
	}
	if got := a.GridStep(40); got != 1 {
		t.Errorf("grid step at 50 px/m, lines ≥40 px apart = %v m, want 1", got)
	}
}
