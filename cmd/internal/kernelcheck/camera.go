package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
)

// Camera is hal/v4l2's camera with its device query (v4l2.Camera).
type Camera interface {
	camera.Camera
	Driver() (string, error)
}

// cameraFrames is how many frames the camera check takes.
const cameraFrames = 8

// barColours are the first three bars of the colour-bar pattern vivid
// shows by default (75 % bars: white, yellow, cyan, then green, magenta,
// red, blue, black), as the fraction of full scale each of R, G and B is
// at: a bar's colour is within colourTol of 0.75 or of 0.
var barColours = [3][3]bool{{true, true, true}, {true, true, false}, {false, true, true}}

const colourTol = 40 // of 255; YUV to RGB conversion and limited range

// checkCamera captures from cam on ex at cfg: frames must have the size
// asked for, show the driver's colour bars in the right colours (so the
// pixel format was decoded as what it is) and change from frame to frame
// (vivid draws a running time stamp over the picture).
func checkCamera(ctx context.Context, cam Camera, ex *executor.Executor, cfg camera.Config, wantDriver string) (string, error) {
	driver, err := cam.Driver()
	if err != nil {
		return "", err
	}
	if wantDriver != "" && driver != wantDriver {
		return "", fmt.Errorf("the device's driver is %q, want %q", driver, wantDriver)
	}
	var (
		mu     sync.Mutex
		frames []camera.Frame
		done   = make(chan struct{})
	)
	if err := cam.Open(cfg, ex, func(f camera.Frame) {
		mu.Lock()
		defer mu.Unlock()
		if len(frames) < cameraFrames {
			frames = append(frames, f)
			if len(frames) == cameraFrames {
				close(done)
			}
		}
	}); err != nil {
		return "", err
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	// Close on the executor: no frame callback runs after it there.
	closeErr := ex.Do(context.Background(), func() { err = cam.Close() })
	if closeErr != nil {
		return "", closeErr
	}
	if err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(frames) < cameraFrames {
		return "", fmt.Errorf("%d frames captured, want %d: %v", len(frames), cameraFrames, ctx.Err())
	}
	for _, f := range frames {
		if f.Width != cfg.Width || f.Height != cfg.Height || f.Stride < 3*f.Width || len(f.Data) != f.Stride*f.Height {
			return "", fmt.Errorf("frame %d: %dx%d, stride %d, %d bytes; want %dx%d RGB", f.Seq, f.Width, f.Height, f.Stride, len(f.Data), cfg.Width, cfg.Height)
		}
	}
	first, last := frames[0], frames[len(frames)-1]
	if err := checkBars(&last); err != nil {
		return "", err
	}
	if bytes.Equal(first.Data, last.Data) {
		return "", fmt.Errorf("frames %d and %d are identical: the picture does not change", first.Seq, last.Seq)
	}
	return fmt.Sprintf("driver %s, %d frames %dx%d (seq %d–%d), colour bars white/yellow/cyan, picture changing",
		driver, len(frames), last.Width, last.Height, first.Seq, last.Seq), nil
}

// checkBars looks at the middle of the first three of eight vertical bars,
// at three quarters of the height (below any text vivid draws).
func checkBars(f *camera.Frame) error {
	var bad []string
	for i, want := range barColours {
		x, y := (2*i+1)*f.Width/16, 3*f.Height/4
		r, g, b := f.RGB(x, y)
		got := [3]byte{r, g, b}
		for c := range got {
			level := 0
			if want[c] {
				level = 191
			}
			if d := int(got[c]) - level; d > colourTol || d < -colourTol {
				bad = append(bad, fmt.Sprintf("bar %d at (%d,%d) is RGB %d,%d,%d", i+1, x, y, r, g, b))
				break
			}
		}
	}
	if bad != nil {
		return fmt.Errorf("not vivid's 75%% colour bars (white, yellow, cyan first): %s", strings.Join(bad, "; "))
	}
	return nil
}
