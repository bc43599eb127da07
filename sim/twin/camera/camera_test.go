package camera

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	halcam "github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
)

const deg = math.Pi / 180

func render(w, h int, pose [3]float64) []byte {
	s := DefaultScene()
	dst := make([]byte, 3*w*h)
	Render(dst, w, h, pose, &s)
	return dst
}

// horizonRow is the first row, down the given column, that is not sky.
func horizonRow(img []byte, w, h, x int) int {
	for y := 0; y < h; y++ {
		if img[3*(y*w+x)+2] != 255 {
			return y
		}
	}
	return h
}

func TestHorizonMovesWithTilt(t *testing.T) {
	const w, h = 160, 120
	focal := float64(w) / 2 / math.Tan(DefaultScene().HFOV/2)
	// Column 10 looks past the boxes (the red one is ahead).
	for _, tilt := range []float64{-20, -10, 0, 10, 20} {
		got := horizonRow(render(w, h, [3]float64{0, tilt * deg, 0}), w, h, 10)
		// A level ray is the horizon; tilting down by θ raises it by
		// focal·tan θ over the row of the optical axis.
		want := float64(h)/2 - focal*math.Tan(tilt*deg)
		if math.Abs(float64(got)-want) > 1.5 {
			t.Errorf("tilt %g°: horizon at row %d, want %.1f", tilt, got, want)
		}
	}
}

func TestRollTiltsTheHorizon(t *testing.T) {
	const w, h = 160, 120
	img := render(w, h, [3]float64{0, 0, 10 * deg})
	l, r := horizonRow(img, w, h, 5), horizonRow(img, w, h, w-6)
	// Dropping the right ear lowers the view's right side: the horizon
	// rises there.
	if r >= l {
		t.Errorf("roll 10°: horizon at row %d on the left, %d on the right; want the right higher", l, r)
	}
}

func TestLandmarksFollowPan(t *testing.T) {
	const w, h = 64, 48
	for _, tc := range []struct {
		pan    float64
		colour [3]byte
	}{{0, [3]byte{220, 40, 40}}, {90, [3]byte{40, 200, 60}}, {180, [3]byte{50, 80, 230}}, {-90, [3]byte{230, 210, 40}}} {
		// Look 12° down at the box 3 m away: its faces fill the centre.
		img := render(w, h, [3]float64{tc.pan * deg, 12 * deg, 0})
		i := 3 * (h/2*w + w/2)
		c := img[i : i+3]
		if !isShadeOf(c, tc.colour) {
			t.Errorf("pan %g°: centre pixel %v, want a shade of %v", tc.pan, c, tc.colour)
		}
	}
}

func isShadeOf(c []byte, want [3]byte) bool {
	for _, k := range []float64{0.65, 0.8, 1} {
		ok := true
		for i := range want {
			if math.Abs(float64(c[i])-float64(want[i])*k) > 1 {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func TestRenderIsDeterministic(t *testing.T) {
	a := render(80, 60, [3]float64{0.3, 0.2, -0.1})
	b := render(80, 60, [3]float64{0.3, 0.2, -0.1})
	if !bytes.Equal(a, b) {
		t.Error("two renders of one pose differ")
	}
	if bytes.Equal(a, render(80, 60, [3]float64{0.31, 0.2, -0.1})) {
		t.Error("a different pan rendered the same picture")
	}
}

func TestStreamsAtTheFrameRateUntilClosed(t *testing.T) {
	ex := executor.NewVirtual()
	pan := 0.0
	c := New(func() [3]float64 { return [3]float64{pan, 0, 0} }, nil)
	var frames []halcam.Frame
	start := ex.Now()
	if err := c.Open(halcam.Config{Width: 32, Height: 24, FPS: 10}, ex, func(f halcam.Frame) { frames = append(frames, f) }); err != nil {
		t.Fatal(err)
	}
	if err := c.Open(halcam.Config{Width: 32, Height: 24, FPS: 10}, ex, func(halcam.Frame) {}); err == nil {
		t.Error("second Open accepted")
	}
	ctx := context.Background()
	if err := ex.RunFor(ctx, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	pan = 1
	if err := ex.RunFor(ctx, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if len(frames) != 10 {
		t.Fatalf("%d frames in 1 s at 10 fps", len(frames))
	}
	for i, f := range frames {
		if want := start.Add(time.Duration(i+1) * 100 * time.Millisecond); !f.Time.Equal(want) || f.Seq != uint64(i) {
			t.Errorf("frame %d: time %v seq %d, want %v seq %d", i, f.Time.Sub(start), f.Seq, want.Sub(start), i)
		}
		if f.Width != 32 || f.Height != 24 || f.Stride != 96 || len(f.Data) != 32*24*3 {
			t.Errorf("frame %d: %dx%d stride %d, %d bytes", i, f.Width, f.Height, f.Stride, len(f.Data))
		}
	}
	if bytes.Equal(frames[3].Data, frames[8].Data) {
		t.Error("frames before and after the pan are the same")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if len(frames) != 10 {
		t.Errorf("%d frames after Close, want 10", len(frames))
	}
	if err := c.Open(halcam.Config{Width: 0, Height: 24, FPS: 10}, ex, func(halcam.Frame) {}); err == nil {
		t.Error("zero width accepted")
	}
}

var _ halcam.Camera = (*Camera)(nil)

func BenchmarkRender640x480(b *testing.B) {
	s := DefaultScene()
	dst := make([]byte, 3*640*480)
	for b.Loop() {
		Render(dst, 640, 480, [3]float64{0.2, 0.1, 0}, &s)
	}
}

// referenceRender is the straightforward renderer Render must agree with:
// per pixel, a normalised ray tested against every box, then the floor,
// then the sky.
func referenceRender(dst []byte, w, h int, pose [3]float64, s *Scene) {
	rot := orientation(pose)
	eye := add([3]float64{0, 0, s.AxesHeight}, mulVec(rot, s.Offset))
	focal := float64(w) / 2 / math.Tan(s.HFOV/2)
	cx, cy := float64(w)/2, float64(h)/2
	fwd, left, up := col(rot, 0), col(rot, 1), col(rot, 2)
	all := make([]int, len(s.Boxes))
	for i := range all {
		all[i] = i
	}
	o := 0
	for y := 0; y < h; y++ {
		dy := cy - (float64(y) + 0.5)
		for x := 0; x < w; x++ {
			dx := cx - (float64(x) + 0.5)
			var d [3]float64
			for i := range d {
				d[i] = focal*fwd[i] + dx*left[i] + dy*up[i]
			}
			r, g, b := referenceShade(eye, d, s, all)
			dst[o], dst[o+1], dst[o+2] = r, g, b
			o += 3
		}
	}
}

// referenceShade returns the colour seen along the ray eye + t·d, testing the
// boxes listed in near.
func referenceShade(eye, d [3]float64, s *Scene, near []int) (r, g, b byte) {
	n := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
	var inv [3]float64
	for i := range d {
		d[i] /= n
		inv[i] = 1 / d[i]
	}
	best, face, hit := math.Inf(1), 0, -1
	for _, i := range near {
		if t, f, ok := slab(&eye, &d, &inv, &s.Boxes[i]); ok && t < best {
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

// Render agrees with the straightforward renderer, pixel for pixel but for
// rays that graze an edge (a grid line, a box's outline), over poses that
// show the floor, the sky, every box, a box close up and rolled views.
func TestRenderMatchesReference(t *testing.T) {
	const w, h = 320, 240
	s := DefaultScene()
	got, want := make([]byte, 3*w*h), make([]byte, 3*w*h)
	for _, pose := range [][3]float64{
		{0, 0, 0}, {0.2, 0.1, 0}, {0, 12 * deg, 0}, {90 * deg, 12 * deg, 0}, {180 * deg, -15 * deg, 0},
		{-90 * deg, 30 * deg, 10 * deg}, {0.7, 0.4, -0.3}, {0, 80 * deg, 0}, {0, -80 * deg, 0}, {2.5, 0.05, 0.6},
	} {
		Render(got, w, h, pose, &s)
		referenceRender(want, w, h, pose, &s)
		differ := 0
		for i := 0; i < len(got); i += 3 {
			if !bytes.Equal(got[i:i+3], want[i:i+3]) {
				differ++
			}
		}
		if differ > w*h/1000 {
			t.Errorf("pose %.2f: %d of %d pixels differ from the reference", pose, differ, w*h)
		}
	}
	// A scene of its own: a box close up ahead, and one beside the camera
	// that reaches behind it, which the view shows only in part.
	near := s
	near.Boxes = append([]Box{
		{Min: [3]float64{0.6, -0.2, 0}, Max: [3]float64{1.0, 0.2, 1.5}, Colour: [3]byte{10, 20, 30}},
		{Min: [3]float64{-0.5, 0.3, 0}, Max: [3]float64{0.5, 0.7, 1.5}, Colour: [3]byte{200, 0, 200}},
	}, s.Boxes...)
	for _, pose := range [][3]float64{{0.3, 0.2, 0}, {0.6, 0, 0}, {0.9, -0.2, 0.3}} {
		Render(got, w, h, pose, &near)
		referenceRender(want, w, h, pose, &near)
		differ, magenta := 0, 0
		for i := 0; i < len(got); i += 3 {
			if !bytes.Equal(got[i:i+3], want[i:i+3]) {
				differ++
			}
			if isShadeOf(want[i:i+3], [3]byte{200, 0, 200}) {
				magenta++
			}
		}
		if magenta == 0 {
			t.Errorf("pose %.2f: the box beside the camera is not in view", pose)
		}
		if differ > w*h/1000 {
			t.Errorf("pose %.2f, boxes close up: %d of %d pixels differ from the reference", pose, differ, w*h)
		}
	}
}

func BenchmarkReferenceRender640x480(b *testing.B) {
	s := DefaultScene()
	dst := make([]byte, 3*640*480)
	for b.Loop() {
		referenceRender(dst, 640, 480, [3]float64{0.2, 0.1, 0}, &s)
	}
}

// Every frame is the picture of the pose at its time, whether the head
// moved since the last frame or not, and whatever the receiver does to the
// frames it was given.
func TestFramesShowThePoseOfTheirTime(t *testing.T) {
	ex := executor.NewVirtual()
	poses := [][3]float64{{0, 0, 0}, {0, 0, 0}, {0.3, 0.1, 0}, {0.3, 0.1, 0}, {0.3, 0.1, 0}, {0, 0, 0}}
	n := 0
	c := New(func() [3]float64 { return poses[min(n, len(poses)-1)] }, nil)
	const w, h = 40, 30
	if err := c.Open(halcam.Config{Width: w, Height: h, FPS: 10}, ex, func(f halcam.Frame) {
		if want := render(w, h, poses[n]); !bytes.Equal(f.Data, want) {
			t.Errorf("frame %d (pose %v) is not the picture of its pose", n, poses[n])
		}
		clear(f.Data) // the receiver's to change
		n++
	}); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), time.Duration(len(poses))*100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n != len(poses) {
		t.Errorf("%d frames, want %d", n, len(poses))
	}
}

// BenchmarkCameraFrame640x480 is one 640×480 frame of a streaming camera,
// with the head moving between frames (rendered) or still (the last frame
// copied).
func BenchmarkCameraFrame640x480(b *testing.B) {
	for _, moving := range []bool{true, false} {
		name := "still"
		if moving {
			name = "moving"
		}
		b.Run(name, func(b *testing.B) {
			ex := executor.NewVirtual()
			pan := 0.0
			c := New(func() [3]float64 { return [3]float64{pan, 0.1, 0} }, nil)
			if err := c.Open(halcam.Config{Width: 640, Height: 480, FPS: 10}, ex, func(halcam.Frame) {
				if moving {
					pan += 0.001
				}
			}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := ex.RunFor(context.Background(), 100*time.Millisecond); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
