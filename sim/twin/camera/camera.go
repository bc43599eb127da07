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
	c.timer = ex.Every(time.Duration(float64(time.Second)/cfg.FPS), func() {
		f := halcam.Frame{Width: cfg.Width, Height: cfg.Height, Stride: 3 * cfg.Width,
			Data: make([]byte, 3*cfg.Width*cfg.Height), Time: ex.Now(), Seq: seq}
		Render(f.Data, cfg.Width, cfg.Height, c.pose(), &c.scene)
		seq++
		onFrame(f)
	})
	return nil
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
	rot := orientation(pose)
	eye := add([3]float64{0, 0, s.AxesHeight}, mulVec(rot, s.Offset))
	focal := float64(w) / 2 / math.Tan(s.HFOV/2)
	cx, cy := float64(w)/2, float64(h)/2
	fwd, left, up := col(rot, 0), col(rot, 1), col(rot, 2)
	// Only rays through a box's on-screen bounding rectangle can hit it.
	bounds := make([]pixelRect, len(s.Boxes))
	for i := range s.Boxes {
		bounds[i] = screenBounds(&s.Boxes[i], eye, fwd, left, up, focal, cx, cy, w, h)
	}
	near := make([]int, 0, len(s.Boxes))
	o := 0
	for y := 0; y < h; y++ {
		dy := cy - (float64(y) + 0.5)
		for x := 0; x < w; x++ {
			dx := cx - (float64(x) + 0.5)
			var d [3]float64
			for i := range d {
				d[i] = focal*fwd[i] + dx*left[i] + dy*up[i]
			}
			near = near[:0]
			for i, b := range bounds {
				if x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1 {
					near = append(near, i)
				}
			}
			r, g, b := shade(eye, d, s, near)
			dst[o], dst[o+1], dst[o+2] = r, g, b
			o += 3
		}
	}
}

// pixelRect is an inclusive rectangle of pixels.
type pixelRect struct{ x0, y0, x1, y1 int }

// screenBounds is the rectangle of pixels a box can cover: its corners
// projected, a pixel of margin, or the whole picture when a corner is
// behind the camera.
func screenBounds(b *Box, eye, fwd, left, up [3]float64, focal, cx, cy float64, w, h int) pixelRect {
	all := pixelRect{0, 0, w - 1, h - 1}
	r := pixelRect{w, h, -1, -1}
	for c := 0; c < 8; c++ {
		p := [3]float64{b.Min[0], b.Min[1], b.Min[2]}
		for i := range p {
			if c&(1<<i) != 0 {
				p[i] = b.Max[i]
			}
			p[i] -= eye[i]
		}
		depth := dot(p, fwd)
		if depth < 1e-3 {
			return all
		}
		px := cx - focal*dot(p, left)/depth
		py := cy - focal*dot(p, up)/depth
		r.x0, r.x1 = min(r.x0, int(math.Floor(px))-1), max(r.x1, int(math.Ceil(px))+1)
		r.y0, r.y1 = min(r.y0, int(math.Floor(py))-1), max(r.y1, int(math.Ceil(py))+1)
	}
	return r
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// shade returns the colour seen along the ray eye + t·d, testing the
// boxes listed in near.
func shade(eye, d [3]float64, s *Scene, near []int) (r, g, b byte) {
	n := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
	var inv [3]float64
	for i := range d {
		d[i] /= n
		inv[i] = 1 / d[i]
	}
	best, face, hit := math.Inf(1), 0, -1
	for _, i := range near {
		if t, f, ok := slab(eye, d, inv, &s.Boxes[i]); ok && t < best {
			best, face, hit = t, f, i
		}
	}
	floor := math.Inf(1)
	if d[2] < 0 {
		floor = -eye[2] / d[2]
	}
	switch {
	case hit >= 0 && best < floor:
		// Light from above and ahead: tops brightest, then x faces, then y.
		k := [3]float64{0.8, 0.65, 1}[face]
		c := s.Boxes[hit].Colour
		return byte(float64(c[0]) * k), byte(float64(c[1]) * k), byte(float64(c[2]) * k)
	case d[2] < 0:
		px, py := eye[0]+floor*d[0], eye[1]+floor*d[1]
		if nearLine(px) || nearLine(py) {
			return 40, 40, 40
		}
		return 150, 150, 140
	}
	// Sky: pale at the horizon, deeper blue overhead.
	k := d[2]
	return byte(200 - 120*k), byte(220 - 100*k), 255
}

// nearLine reports whether v is within 2.5 cm of a whole metre.
func nearLine(v float64) bool {
	f := v - math.Floor(v)
	return f < 0.025 || f > 0.975
}

// slab intersects a ray with a box: the entry distance and the axis of the
// face it enters through.
// inv holds 1/d, computed once per ray.
func slab(eye, d, inv [3]float64, b *Box) (t float64, face int, ok bool) {
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
