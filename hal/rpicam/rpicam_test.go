package rpicam_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/rpicam"
)

// picture is a w×h JPEG of one colour.
func picture(t *testing.T, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var colours = []color.RGBA{{200, 20, 20, 255}, {20, 200, 20, 255}, {20, 20, 200, 255}}

func TestNextJPEGSplitsAStream(t *testing.T) {
	var stream bytes.Buffer
	stream.WriteString("rpicam-vid banner\xff\x00")
	var want [][]byte
	for _, c := range colours {
		p := picture(t, 40, 30, c)
		want = append(want, p)
		stream.Write(p)
	}
	r := bufio.NewReader(bytes.NewReader(stream.Bytes()))
	for i, w := range want {
		got, err := rpicam.NextJPEG(r)
		if err != nil || !bytes.Equal(got, w) {
			t.Fatalf("picture %d: %d bytes (err %v), want the %d bytes written", i, len(got), err, len(w))
		}
	}
	if _, err := rpicam.NextJPEG(r); !errors.Is(err, io.EOF) {
		t.Errorf("after the last picture: %v, want EOF", err)
	}
	cut := want[0][:len(want[0])-10]
	if _, err := rpicam.NextJPEG(bufio.NewReader(bytes.NewReader(cut))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut picture: %v, want ErrUnexpectedEOF", err)
	}
}

// fakeTool writes a script standing in for rpicam-vid: it records its
// arguments and writes body's output.
func fakeTool(t *testing.T, body string) (path, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	path = filepath.Join(dir, "rpicam-vid")
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, argsFile
}

func TestStreamsTheToolsPictures(t *testing.T) {
	frames := filepath.Join(t.TempDir(), "frames.mjpeg")
	var all []byte
	for _, c := range colours {
		all = append(all, picture(t, 64, 48, c)...)
	}
	if err := os.WriteFile(frames, all, 0o644); err != nil {
		t.Fatal(err)
	}
	tool, argsFile := fakeTool(t, "cat "+frames+"\nexec sleep 60")
	ex := bustest.RunExecutor(t)
	cam := rpicam.New(rpicam.Options{Command: tool, Index: 1})
	var mu sync.Mutex
	var got []camera.Frame
	if err := cam.Open(camera.Config{Width: 64, Height: 48, FPS: 10}, ex, func(f camera.Frame) {
		mu.Lock()
		got = append(got, f)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := cam.Open(camera.Config{Width: 64, Height: 48, FPS: 10}, ex, func(camera.Frame) {}); !errors.Is(err, camera.ErrOpen) {
		t.Errorf("second Open: %v, want ErrOpen", err)
	}
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n != 3 {
			return fmt.Errorf("%d frames, want 3", n)
		}
		return nil
	})
	mu.Lock()
	for i, f := range got {
		r, g, b := f.RGB(32, 24)
		want := colours[i]
		if f.Width != 64 || f.Height != 48 || f.Seq != uint64(i) || absDiff(r, want.R) > 12 || absDiff(g, want.G) > 12 || absDiff(b, want.B) > 12 {
			t.Errorf("frame %d: %dx%d seq %d colour %d,%d,%d, want 64x48 seq %d colour %v", i, f.Width, f.Height, f.Seq, r, g, b, i, want)
		}
	}
	mu.Unlock()
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--nopreview --timeout 0 --codec mjpeg --width 64 --height 48 --framerate 10 --camera 1 --output -"; strings.TrimSpace(string(args)) != want {
		t.Errorf("rpicam-vid %s, want %s", args, want)
	}
	closed := make(chan struct{})
	go func() { _ = cam.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the tool")
	}
	if err := cam.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
}

func TestToolFailures(t *testing.T) {
	ex := bustest.RunExecutor(t)
	cfg := camera.Config{Width: 640, Height: 480, FPS: 30}
	err := rpicam.New(rpicam.Options{Command: filepath.Join(t.TempDir(), "rpicam-vid")}).Open(cfg, ex, func(camera.Frame) {})
	if err == nil || !strings.Contains(err.Error(), "rpicam-apps") {
		t.Errorf("missing tool: %v, want an error naming rpicam-apps", err)
	}
	tool, _ := fakeTool(t, "echo 'ERROR: *** no cameras available ***' >&2\nexit 1")
	cam := rpicam.New(rpicam.Options{Command: tool})
	if err := cam.Open(cfg, ex, func(camera.Frame) {}); err != nil {
		t.Fatal(err)
	}
	bustest.WaitUntil(t, 10*time.Second, "the failing tool to be reported", func() bool { return cam.Err() != nil })
	if err := cam.Err(); !strings.Contains(err.Error(), "no cameras available") {
		t.Errorf("Err() = %v, want the tool's message", err)
	}
	if err := cam.Open(camera.Config{}, ex, func(camera.Frame) {}); err == nil {
		t.Error("an empty configuration was accepted")
	}
}

func absDiff(a, b byte) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
