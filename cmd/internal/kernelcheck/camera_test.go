package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
)

// barFrame draws eight 75 % colour bars, and a counter in the top-left
// pixel so that frames differ.
func barFrame(w, h int, n byte) camera.Frame {
	bars := [8][3]byte{{191, 191, 191}, {191, 191, 0}, {0, 191, 191}, {0, 191, 0}, {191, 0, 191}, {191, 0, 0}, {0, 0, 191}, {0, 0, 0}}
	f := camera.Frame{Width: w, Height: h, Stride: 3 * w, Data: make([]byte, 3*w*h)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			copy(f.Data[y*f.Stride+3*x:], bars[x*8/w][:])
		}
	}
	f.Data[0] = n
	return f
}

// fakeCamera delivers frames made by frame on the executor until closed.
type fakeCamera struct {
	frame func(n int) camera.Frame
	stop  chan struct{}
	done  chan struct{}
}

func (c *fakeCamera) Driver() (string, error) { return "vivid", nil }

func (c *fakeCamera) Open(cfg camera.Config, ex *executor.Executor, onFrame func(camera.Frame)) error {
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		for n := 0; ; n++ {
			f := c.frame(n)
			f.Seq = uint64(n)
			select {
			case <-c.stop:
				return
			case <-time.After(time.Millisecond):
				ex.Post(func() { onFrame(f) })
			}
		}
	}()
	return nil
}

func (c *fakeCamera) Close() error {
	close(c.stop)
	<-c.done
	return nil
}

func TestCameraCheck(t *testing.T) {
	ex := bustest.RunExecutor(t)
	cfg := camera.Config{Width: 64, Height: 48, FPS: 30}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	good := &fakeCamera{frame: func(n int) camera.Frame { return barFrame(64, 48, byte(n)) }}
	if detail, err := checkCamera(ctx, good, ex, cfg, "vivid"); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(detail, "8 frames 64x48") {
		t.Errorf("detail %q", detail)
	}
	for _, tc := range []struct {
		name  string
		frame func(n int) camera.Frame
		want  string
	}{
		{"frozen", func(int) camera.Frame { return barFrame(64, 48, 0) }, "identical"},
		{"wrong size", func(n int) camera.Frame { return barFrame(32, 24, byte(n)) }, "32x24"},
		{"swapped red and blue", func(n int) camera.Frame {
			f := barFrame(64, 48, byte(n))
			for i := 0; i < len(f.Data); i += 3 {
				f.Data[i], f.Data[i+2] = f.Data[i+2], f.Data[i]
			}
			return f
		}, "bar 2"},
	} {
		_, err := checkCamera(ctx, &fakeCamera{frame: tc.frame}, ex, cfg, "vivid")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: checkCamera = %v, want an error about %q", tc.name, err, tc.want)
		}
	}
	if _, err := checkCamera(ctx, good, ex, cfg, "uvcvideo"); err == nil || !strings.Contains(err.Error(), `"vivid"`) {
		t.Errorf("checkCamera on another driver = %v", err)
	}
	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	none := &fakeCamera{frame: func(n int) camera.Frame { return barFrame(64, 48, byte(n)) }}
	if _, err := checkCamera(short, none, ex, cfg, ""); err == nil || !strings.Contains(err.Error(), "frames captured") {
		t.Errorf("checkCamera out of time = %v, want the count of frames captured", err)
	}
}
