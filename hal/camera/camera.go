package camera

import (
	"errors"
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// Config is what a camera is opened with.
type Config struct {
	Width, Height int     // pixels
	FPS           float64 // frames per second
}

// Validate checks that the configuration asks for a picture and a rate.
func (c Config) Validate() error {
	if c.Width <= 0 || c.Height <= 0 {
		return fmt.Errorf("camera: resolution %dx%d: want positive width and height", c.Width, c.Height)
	}
	if c.FPS <= 0 {
		return fmt.Errorf("camera: framerate %g: want a positive rate", c.FPS)
	}
	return nil
}

// Frame is one picture: Height rows of Stride bytes, 3 bytes (R, G, B) per
// pixel. Data belongs to the receiver; the camera does not reuse it.
type Frame struct {
	Width, Height int
	Stride        int // bytes per row, at least 3·Width
	Data          []byte
	// Time is when the picture was taken, on the clock of the camera's
	// executor in the simulator and the kernel's capture timestamp on a Pi.
	Time time.Time
	// Seq counts frames from 0 since Open; a gap means frames were dropped.
	Seq uint64
}

// RGB returns the colour of pixel (x, y).
func (f *Frame) RGB(x, y int) (r, g, b byte) {
	i := y*f.Stride + 3*x
	return f.Data[i], f.Data[i+1], f.Data[i+2]
}

// Camera is a video camera. Open starts the stream: each frame is handed to
// onFrame on ex. Close stops it; no callback runs after Close returns on the
// executor. A camera streams to one receiver at a time.
type Camera interface {
	Open(cfg Config, ex *executor.Executor, onFrame func(Frame)) error
	Close() error
}

// Provider is implemented by boards that carry a camera.
type Provider interface {
	// Camera returns the board's camera, or an error when none is fitted.
	Camera() (Camera, error)
}

// ErrNotFitted is returned by a Provider whose board has no camera.
var ErrNotFitted = errors.New("camera: no camera fitted")

// ErrOpen is returned by Open on a camera that is already streaming.
var ErrOpen = errors.New("camera: already open")
