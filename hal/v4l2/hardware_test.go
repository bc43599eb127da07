//go:build linux && hardware

package v4l2

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
)

// TestHardwareCapture streams a second from a real camera:
// go test -tags hardware ./hal/v4l2 (SAINT_V4L2_DEVICE=/dev/videoN).
func TestHardwareCapture(t *testing.T) {
	c := New(Options{Path: os.Getenv("SAINT_V4L2_DEVICE")})
	info, err := c.Query()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (%s) at %s, capabilities %#x", info.Card, info.Driver, info.BusInfo, info.Capabilities)
	ex := executor.New(nil)
	var frames []camera.Frame
	if err := c.Open(camera.Config{Width: 640, Height: 480, FPS: 30}, ex, func(f camera.Frame) { frames = append(frames, f) }); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	// The executor is not running now: this goroutine is its only user.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if len(frames) < 10 {
		t.Fatalf("%d frames in 2 s", len(frames))
	}
	f := frames[len(frames)-1]
	if f.Width <= 0 || f.Height <= 0 || len(f.Data) != f.Stride*f.Height {
		t.Errorf("frame %dx%d stride %d, %d bytes", f.Width, f.Height, f.Stride, len(f.Data))
	}
	t.Logf("%d frames, %dx%d", len(frames), f.Width, f.Height)
}
