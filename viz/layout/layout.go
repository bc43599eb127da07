package layout

import "math"

// Rect is a rectangle in window pixels, origin top left.
type Rect struct{ X, Y, W, H int }

// Inset returns r shrunk by n pixels on every side (never below zero size).
func (r Rect) Inset(n int) Rect {
	out := Rect{r.X + n, r.Y + n, r.W - 2*n, r.H - 2*n}
	out.W, out.H = max(out.W, 0), max(out.H, 0)
	return out
}

// Contains reports whether pixel (x, y) lies inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}

// Header is the height in pixels of the top bar (e-stop, connection).
const Header = 22

// MinWidth and MinHeight are the smallest window the views fit in; a
// smaller window is laid out as if it were this size (and clipped).
const (
	MinWidth  = 640
	MinHeight = 400
)

// Layout is where each view goes.
type Layout struct {
	Width, Height int
	Header        Rect // e-stop state, connection, last error
	Arena         Rect // top-down view of the tracked base
	Status        Rect // nodes and routes
	Balance       Rect // the balancing base from the side
	Arms          Rect // both arms from the front and the side
	Head          Rect // pan, tilt and roll
	Console       Rect // the console's 128×64 screen
	Help          Rect // the keys
	Plots         Rect // scrolling signals
	// Humanoid is the humanoid's front and side views (WithHumanoid);
	// empty otherwise.
	Humanoid Rect
}

// TitleHeight is the height of a view's title line; a view's content
// starts below it.
const TitleHeight = 22

// Compute lays out a window of w×h pixels: the arena and the status list
// on the left, the robot's parts across the top right, the console's
// screen and the plots below them.
func Compute(w, h int) Layout {
	w, h = max(w, MinWidth), max(h, MinHeight)
	l := Layout{Width: w, Height: h, Header: Rect{0, 0, w, Header}}
	body := Rect{0, Header, w, h - Header}
	left := body.W * 42 / 100
	arenaH := min(left, body.H*64/100)
	l.Arena = Rect{0, body.Y, left, arenaH}
	l.Status = Rect{0, body.Y + arenaH, left, body.H - arenaH}
	right := Rect{left, body.Y, body.W - left, body.H}
	topH := right.H * 44 / 100
	third := right.W / 3
	l.Balance = Rect{right.X, right.Y, third, topH}
	l.Arms = Rect{right.X + third, right.Y, third, topH}
	l.Head = Rect{right.X + 2*third, right.Y, right.W - 2*third, topH}
	// The console keeps the screen's 2:1 aspect at twice its size when it
	// fits, under its title.
	consoleW := min(2*128+24, right.W/2)
	consoleH := consoleW/2 + TitleHeight + 10
	l.Console = Rect{right.X + right.W - consoleW, right.Y + topH, consoleW, consoleH}
	l.Help = Rect{l.Console.X, l.Console.Y + consoleH, consoleW, right.H - topH - consoleH}
	l.Plots = Rect{right.X, right.Y + topH, right.W - consoleW, right.H - topH}
	return l
}

// Arena maps world metres (x east, y north, as the simulator's pose) to
// pixels in Rect: Center is in the middle of Rect, and HalfExtent metres
// fit between the middle and the nearer edge.
type Arena struct {
	Rect       Rect
	CenterX    float64 // m
	CenterY    float64 // m
	HalfExtent float64 // m
}

// DefaultHalfExtent is the arena's default half width in metres.
const DefaultHalfExtent = 2.5

// NewArena returns the arena view of l centred on the origin.
func (l Layout) NewArena(halfExtent float64) Arena {
	if !(halfExtent > 0) {
		halfExtent = DefaultHalfExtent
	}
	r := l.Arena.Inset(9)
	r.Y, r.H = r.Y+TitleHeight, r.H-TitleHeight
	return Arena{Rect: r, HalfExtent: halfExtent}
}

// Scale is pixels per metre.
func (a Arena) Scale() float64 {
	return float64(min(a.Rect.W, a.Rect.H)) / (2 * a.HalfExtent)
}

// ToPixel returns the pixel of world point (x, y): x grows to the right,
// y grows up the screen.
func (a Arena) ToPixel(x, y float64) (px, py float64) {
	s := a.Scale()
	cx := float64(a.Rect.X) + float64(a.Rect.W)/2
	cy := float64(a.Rect.Y) + float64(a.Rect.H)/2
	return cx + (x-a.CenterX)*s, cy - (y-a.CenterY)*s
}

// ToWorld is the inverse of ToPixel.
func (a Arena) ToWorld(px, py float64) (x, y float64) {
	s := a.Scale()
	cx := float64(a.Rect.X) + float64(a.Rect.W)/2
	cy := float64(a.Rect.Y) + float64(a.Rect.H)/2
	return a.CenterX + (px-cx)/s, a.CenterY - (py-cy)/s
}

// GridStep is the spacing of the arena's grid lines in metres: a round
// number giving lines at least minPx pixels apart.
func (a Arena) GridStep(minPx float64) float64 {
	s := a.Scale()
	for _, step := range []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100} {
		if step*s >= minPx {
			return step
		}
	}
	return 100
}

// Visible reports whether world point (x, y) is inside the arena's
// rectangle.
func (a Arena) Visible(x, y float64) bool {
	px, py := a.ToPixel(x, y)
	return a.Rect.Contains(int(math.Floor(px)), int(math.Floor(py)))
}

// WithHumanoid is l for a robot with a humanoid's limbs: the humanoid's
// views take the place of the keys' (docs/viz.md lists them), and every
// other view stays where it was.
func (l Layout) WithHumanoid() Layout {
	l.Humanoid, l.Help = l.Help, Rect{}
	return l
}

// The humanoid's views show a box of world around it: HumanoidTop metres
// above the floor down to HumanoidBottom, HumanoidWidth metres across.
const (
	HumanoidTop    = 1.3
	HumanoidBottom = -0.05
	HumanoidWidth  = 0.9
)

// Figure maps the humanoid's robot-frame points (x forward, y left, z up,
// the floor at 0; metres) to the pixels of one of its views: the front
// view looks at its face (its left on the right of the screen), the side
// view at its right side (its front to the right).
type Figure struct {
	Rect  Rect // the view, under its caption
	Side  bool
	Scale float64 // pixels per metre
}

// HumanoidFigures returns the front and the side view of the humanoid in
// l.Humanoid, side by side under the panel's title, each with a caption
// line; both empty when l has no humanoid view.
func (l Layout) HumanoidFigures() (front, side Figure) {
	r := l.Humanoid.Inset(9)
	r.Y, r.H = r.Y+TitleHeight, r.H-TitleHeight-16
	if r.W <= 0 || r.H <= 0 {
		return Figure{}, Figure{}
	}
	half := r.W / 2
	scale := math.Min(float64(half)/HumanoidWidth, float64(r.H)/(HumanoidTop-HumanoidBottom))
	front = Figure{Rect: Rect{r.X, r.Y, half, r.H}, Scale: scale}
	side = Figure{Rect: Rect{r.X + half, r.Y, r.W - half, r.H}, Side: true, Scale: scale}
	return front, side
}

// ToPixel returns the pixel of robot-frame point p.
func (f Figure) ToPixel(p [3]float64) (px, py float64) {
	across := p[1]
	if f.Side {
		across = p[0]
	}
	cx := float64(f.Rect.X) + float64(f.Rect.W)/2
	floor := float64(f.Rect.Y+f.Rect.H) + HumanoidBottom*f.Scale
	return cx + across*f.Scale, floor - p[2]*f.Scale
}
