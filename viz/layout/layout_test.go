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

// The humanoid's views sit inside its panel, side by side, the floor at
// the bottom; a point to the robot's left is right of its centre in the
// front view, a point in front of it right of its centre in the side view.
func TestHumanoidFigures(t *testing.T) {
	l := Compute(1280, 800)
	if l.Humanoid.W != 0 {
		t.Fatalf("a humanoid view without a humanoid: %+v", l.Humanoid)
	}
	h := l.WithHumanoid()
	if h.Humanoid != l.Help || h.Help.W != 0 || h.Plots != l.Plots || h.Arms != l.Arms {
		t.Fatalf("WithHumanoid: %+v from %+v", h, l)
	}
	front, side := h.HumanoidFigures()
	for _, f := range []Figure{front, side} {
		for _, p := range [][3]float64{{0, 0, 0}, {0.3, 0.3, HumanoidTop}, {-0.3, -0.3, 0}} {
			x, y := f.ToPixel(p)
			if !h.Humanoid.Contains(int(x), int(y)) {
				t.Errorf("side %v: %v at (%.0f, %.0f), outside the panel %+v", f.Side, p, x, y, h.Humanoid)
			}
		}
	}
	cx, _ := front.ToPixel([3]float64{})
	if lx, _ := front.ToPixel([3]float64{0, 0.2, 0}); lx <= cx {
		t.Errorf("front view: the robot's left at x %.0f, not right of its centre %.0f", lx, cx)
	}
	sx, _ := side.ToPixel([3]float64{})
	if fx, _ := side.ToPixel([3]float64{0.2, 0, 0}); fx <= sx {
		t.Errorf("side view: the robot's front at x %.0f, not right of its centre %.0f", fx, sx)
	}
	if _, top := front.ToPixel([3]float64{0, 0, 1}); top >= float64(front.Rect.Y+front.Rect.H) {
		t.Errorf("1 m up is at y %.0f, below the view", top)
	}
}
