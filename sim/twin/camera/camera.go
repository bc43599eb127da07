package camera

import (
	"math"
	"time"

	halcam "github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
)

// Box is an axis-aligned box in the robot frame, metres.
type Box struct {
	Min, Max [3]float64
	Colour   [3]byte
}

// Scene is what the camera sees and where it sits.
type Scene struct {
	// AxesHeight is the height of the head's axes above the floor, m.
	AxesHeight float64
	// Offset is the camera's position from the axes' intersection, head
	// frame, m.
	Offset [3]float64
	// HFOV is the horizontal field of view, rad.
	HFOV  float64
	Boxes []Box
}

// DefaultScene is the scene of the package doc: the head's axes 1.2 m up,
// the camera 6 cm forward and 3 cm above them, boxes 3 m away.
func DefaultScene() Scene {
	box := func(x, y float64, c [3]byte) Box {
		return Box{Min: [3]float64{x - 0.25, y - 0.25, 0}, Max: [3]float64{x + 0.25, y + 0.25, 0.8}, Colour: c}
	}
	return Scene{
		AxesHeight: 1.2,
		Offset:     [3]float64{0.06, 0, 0.03},
		HFOV:       62.2 * math.Pi / 180,
		Boxes: []Box{
			box(3, 0, [3]byte{220, 40, 40}),
			box(0, 3, [3]byte{40, 200, 60}),
			box(-3, 0, [3]byte{50, 80, 230}),
			box(0, -3, [3]byte{230, 210, 40}),
		},
	}
}

// Camera is the simulated head camera.
type Camera struct {
	pose  func() [3]float64
	scene Scene
	timer *executor.Timer
	r     renderer
	// last is the most recent frame rendered and the pose it was rendered
	// from: while the head holds still, the next frame is a copy of it.
	last     []byte
	lastPose [3]float64
}

// New returns a camera that reads the head's pan, tilt and roll (rad) from
// pose each time it renders. A nil scene means DefaultScene.
func New(pose func() [3]float64, scene *Scene) *Camera {
	s := DefaultScene()
	if scene != nil {
		s = *scene
	}
	return &Camera{pose: pose, scene: s}
}

// Open implements hal/camera.Camera: from one frame period after now, a
// frame every period, rendered and handed to onFrame on ex. Call it on ex.
func (c *Camera) Open(cfg halcam.Config, ex *executor.Executor, onFrame func(halcam.Frame)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if c.timer != nil {
		return halcam.ErrOpen
	}
	var seq uint64
	c.last = nil
	c.timer = ex.Every(time.Duration(float64(time.Second)/cfg.FPS), func() {
		f := halcam.Frame{Width: cfg.Width, Height: cfg.Height, Stride: 3 * cfg.Width,
			Data: make([]byte, 3*cfg.Width*cfg.Height), Time: ex.Now(), Seq: seq}
		c.frame(f.Data, cfg.Width, cfg.Height, c.pose())
		seq++
		onFrame(f)
	})
	return nil
}

// frame renders the view from pose into dst, or copies the last frame when
// the pose has not changed since: the picture depends on nothing else.
func (c *Camera) frame(dst []byte, w, h int, pose [3]float64) {
	if c.last != nil && pose == c.lastPose {
		copy(dst, c.last)
		return
	}
	c.r.render(dst, w, h, pose, &c.scene)
	// The receiver owns dst and may change it; the copy kept is ours.
	if c.last == nil {
		c.last = make([]byte, len(dst))
	}
	copy(c.last, dst)
	c.lastPose = pose
}

// Close implements hal/camera.Camera. Call it on the executor Open was
// given.
func (c *Camera) Close() error {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	return nil
}

// Render draws the view from pose (pan, tilt, roll, rad) into dst, packed
// RGB with 3·w bytes per row.
func Render(dst []byte, w, h int, pose [3]float64, s *Scene) {
	var r renderer
	r.render(dst, w, h, pose, s)
}

// renderer holds the per-box scratch of a render, kept between frames so a
// streaming camera renders without allocating.
type renderer struct {
	boxes  []boxView
	active []int
}

// boxView is a box as one render sees it: where on screen it can appear
// and its faces' colours, shaded once rather than per pixel.
type boxView struct {
	box    *Box
	bounds pixelRect
	faces  [3][3]byte // indexed by the axis of the face the ray enters
}

// render casts a ray through every pixel. The ray's direction is left
// unnormalised: the floor's and the boxes' hit distances scale alike, so
// which is nearer does not change, and only sky pixels, whose colour
// depends on the ray's elevation, pay for a square root. Rays are tested
// only against the boxes whose screen rectangle holds the pixel, found per
// row rather than per pixel.
func (r *renderer) render(dst []byte, w, h int, pose [3]float64, s *Scene) {
	rot := orientation(pose)
	eye := add([3]float64{0, 0, s.AxesHeight}, mulVec(rot, s.Offset))
	focal := float64(w) / 2 / math.Tan(s.HFOV/2)
	cx, cy := float64(w)/2, float64(h)/2
	fwd, left, up := col(rot, 0), col(rot, 1), col(rot, 2)
	r.boxes = r.boxes[:0]
	for i := range s.Boxes {
		b := &s.Boxes[i]
		v := boxView{box: b, bounds: screenBounds(b, eye, fwd, left, up, focal, cx, cy, w, h)}
		// Light from above and ahead: tops brightest, then x faces, then y.
		for face, k := range [3]float64{0.8, 0.65, 1} {
			for c := range v.faces[face] {
				v.faces[face][c] = byte(float64(b.Colour[c]) * k)
			}
		}
		r.boxes = append(r.boxes, v)
	}
	var ahead [3]float64
	for i := range ahead {
		ahead[i] = focal * fwd[i]
	}
	for y := 0; y < h; y++ {
		row := dst[3*w*y : 3*w*(y+1)]
		dy := cy - (float64(y) + 0.5)
		var vert [3]float64
		for i := range vert {
			vert[i] = dy * up[i]
		}
		// The boxes this row can show, and the columns they span.
		r.active = r.active[:0]
		bx0, bx1 := w, -1
		for i := range r.boxes {
			b := r.boxes[i].bounds
			if y >= b.y0 && y <= b.y1 && b.x0 <= b.x1 {
				r.active = append(r.active, i)
				bx0, bx1 = min(bx0, b.x0), max(bx1, b.x1)
			}
		}
		for x := 0; x < w; x++ {
			dx := cx - (float64(x) + 0.5)
			d := [3]float64{
				ahead[0] + dx*left[0] + vert[0],
				ahead[1] + dx*left[1] + vert[1],
				ahead[2] + dx*left[2] + vert[2],
			}
			floor := math.Inf(1)
			if d[2] < 0 {
				floor = -eye[2] / d[2]
			}
			if x >= bx0 && x <= bx1 {
				if c, ok := r.hitBox(&eye, &d, x, y, floor); ok {
					row[3*x], row[3*x+1], row[3*x+2] = c[0], c[1], c[2]
					continue
				}
			}
			if d[2] < 0 {
				px, py := eye[0]+floor*d[0], eye[1]+floor*d[1]
				if nearLine(px) || nearLine(py) {
					row[3*x], row[3*x+1], row[3*x+2] = 40, 40, 40
				} else {
					row[3*x], row[3*x+1], row[3*x+2] = 150, 150, 140
				}
				continue
			}
			// Sky: pale at the horizon, deeper blue overhead.
			k := d[2] / math.Sqrt(d[0]*d[0]+d[1]*d[1]+d[2]*d[2])
			row[3*x], row[3*x+1], row[3*x+2] = byte(200-120*k), byte(220-100*k), 255
		}
	}
}

// hitBox returns the colour of the nearest of the row's active boxes that
// the ray eye + t·d hits at pixel (x, y) before the floor, which it meets
// at t = floor.
func (r *renderer) hitBox(eye, d *[3]float64, x, y int, floor float64) ([3]byte, bool) {
	best, face, hit := floor, 0, -1
	var inv [3]float64
	inverted := false
	for _, i := range r.active {
		v := &r.boxes[i]
		if x < v.bounds.x0 || x > v.bounds.x1 {
			continue
		}
		if !inverted {
			inv = [3]float64{1 / d[0], 1 / d[1], 1 / d[2]}
			inverted = true
		}
		if t, f, ok := slab(eye, d, &inv, v.box); ok && t < best {
			best, face, hit = t, f, i
		}
	}
	if hit < 0 {
		return [3]byte{}, false
	}
	return r.boxes[hit].faces[face], true
}

// pixelRect is an inclusive rectangle of pixels.
type pixelRect struct{ x0, y0, x1, y1 int }

// screenBounds is the rectangle of pixels a box can cover, a pixel of
// margin around the projection of the part of it in front of the camera:
// its corners there and, for an edge that passes behind the camera, the
// point where the edge crosses the near plane. A box wholly behind the
// camera covers no pixel.
func screenBounds(b *Box, eye, fwd, left, up [3]float64, focal, cx, cy float64, w, h int) pixelRect {
	const nearPlane = 1e-3 // m in front of the camera
	var corners [8][3]float64
	var depths [8]float64
	for c := range corners {
		p := [3]float64{b.Min[0], b.Min[1], b.Min[2]}
		for i := range p {
			if c&(1<<i) != 0 {
				p[i] = b.Max[i]
			}
			p[i] -= eye[i]
		}
		corners[c], depths[c] = p, dot(p, fwd)
	}
	r := pixelRect{w, h, -1, -1}
	// Projected coordinates are clamped to a little beyond the picture so
	// points just in front of the camera do not overflow an int.
	lo, hi := -2.0, float64(max(w, h))+2
	project := func(p [3]float64, depth float64) {
		px := min(max(cx-focal*dot(p, left)/depth, lo), hi)
		py := min(max(cy-focal*dot(p, up)/depth, lo), hi)
		r.x0, r.x1 = min(r.x0, int(math.Floor(px))-1), max(r.x1, int(math.Ceil(px))+1)
		r.y0, r.y1 = min(r.y0, int(math.Floor(py))-1), max(r.y1, int(math.Ceil(py))+1)
	}
	for c, p := range corners {
		if depths[c] >= nearPlane {
			project(p, depths[c])
		}
		// The edges from this corner along each axis, each visited once.
		for i := 0; i < 3; i++ {
			o := c | 1<<i
			if o == c || (depths[c] >= nearPlane) == (depths[o] >= nearPlane) {
				continue
			}
			f := (nearPlane - depths[c]) / (depths[o] - depths[c])
			var q [3]float64
			for k := range q {
				q[k] = p[k] + f*(corners[o][k]-p[k])
			}
			project(q, nearPlane)
		}
	}
	return r
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// nearLine reports whether v is within 2.5 cm of a whole metre.
func nearLine(v float64) bool {
	// Truncating through an int64 is a cheaper floor than math.Floor for
	// the distances a camera sees; beyond 2⁵² m, where every float64 is a
	// whole number, and for NaN, math.Floor decides.
	const exact = 1 << 52
	var f float64
	if v > -exact && v < exact {
		t := float64(int64(v))
		if t > v {
			t--
		}
		f = v - t
	} else {
		f = v - math.Floor(v)
	}
	return f < 0.025 || f > 0.975
}

// slab intersects a ray with a box: the entry distance and the axis of the
// face it enters through.
// inv holds 1/d, computed once per ray.
func slab(eye, d, inv *[3]float64, b *Box) (t float64, face int, ok bool) {
	tmin, tmax := math.Inf(-1), math.Inf(1)
	for i := 0; i < 3; i++ {
		if d[i] == 0 {
			if eye[i] < b.Min[i] || eye[i] > b.Max[i] {
				return 0, 0, false
			}
			continue
		}
		t0, t1 := (b.Min[i]-eye[i])*inv[i], (b.Max[i]-eye[i])*inv[i]
		if t0 > t1 {
			t0, t1 = t1, t0
		}
		if t0 > tmin {
			tmin, face = t0, i
		}
		if t1 < tmax {
			tmax = t1
		}
	}
	if tmin > tmax || tmax < 0 || tmin < 0 {
		return 0, 0, false
	}
	return tmin, face, true
}

type mat3 [3][3]float64

// orientation is Rz(pan)·Ry(tilt)·Rx(roll).
func orientation(p [3]float64) mat3 {
	cz, sz := math.Cos(p[0]), math.Sin(p[0])
	cy, sy := math.Cos(p[1]), math.Sin(p[1])
	cx, sx := math.Cos(p[2]), math.Sin(p[2])
	return mat3{
		{cz * cy, cz*sy*sx - sz*cx, cz*sy*cx + sz*sx},
		{sz * cy, sz*sy*sx + cz*cx, sz*sy*cx - cz*sx},
		{-sy, cy * sx, cy * cx},
	}
}

func col(m mat3, j int) [3]float64 { return [3]float64{m[0][j], m[1][j], m[2][j]} }

func mulVec(m mat3, v [3]float64) [3]float64 {
	var r [3]float64
	for i := range r {
		r[i] = m[i][0]*v[0] + m[i][1]*v[1] + m[i][2]*v[2]
	}
	return r
}

func add(a, b [3]float64) [3]float64 { return [3]float64{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
