package rpicam

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/internal/childproc"
)

// DefaultCommand is the streaming tool of Raspberry Pi OS (rpicam-apps).
const DefaultCommand = "rpicam-vid"

// Options configure a Camera.
type Options struct {
	// Command is the rpicam-vid executable, by name (looked up in PATH) or
	// path; empty means DefaultCommand.
	Command string
	// Index is the camera number (rpicam-vid --camera), 0 for the first.
	Index int
}

// Camera is a CSI camera streamed through rpicam-vid. Open and Close are
// called on the executor frames go to.
type Camera struct {
	o Options

	mu     sync.Mutex
	proc   *childproc.Process // rpicam-vid, while open
	closed bool
	done   chan struct{}
	err    error
}

// New returns a camera; nothing runs until Open.
func New(o Options) *Camera {
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	return &Camera{o: o}
}

// Args are rpicam-vid's arguments for cfg: no preview, run until stopped,
// MJPEG at the configured size and rate, to standard output.
func (c *Camera) Args(cfg camera.Config) []string {
	return []string{"--nopreview", "--timeout", "0", "--codec", "mjpeg",
		"--width", strconv.Itoa(cfg.Width), "--height", strconv.Itoa(cfg.Height),
		"--framerate", strconv.FormatFloat(cfg.FPS, 'f', -1, 64),
		"--camera", strconv.Itoa(c.o.Index), "--output", "-"}
}

// Open starts rpicam-vid and streams its pictures to onFrame on ex.
// rpicam-vid is a child process that dies with this one (it would hold
// the camera otherwise): internal/childproc.
func (c *Camera) Open(cfg camera.Config, ex *executor.Executor, onFrame func(camera.Frame)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return camera.ErrOpen
	}
	path, err := exec.LookPath(c.o.Command)
	if err != nil {
		return fmt.Errorf("rpicam: %s not found (%v): the CSI camera is streamed by Raspberry Pi OS's rpicam-apps: sudo apt install rpicam-apps", c.o.Command, err)
	}
	// A pipe of the camera's own, not cmd.StdoutPipe: childproc.Start
	// waits for the process, and the stream is read to its end here.
	out, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("rpicam: %w", err)
	}
	cmd := exec.Command(path, c.Args(cfg)...)
	cmd.Stdout = w
	var stderr tail
	cmd.Stderr = &stderr
	proc, err := childproc.Start(cmd)
	w.Close()
	if err != nil {
		out.Close()
		return fmt.Errorf("rpicam: starting %s: %w", path, err)
	}
	c.proc, c.closed, c.err, c.done = proc, false, nil, make(chan struct{})
	done := c.done
	go func() {
		defer close(done)
		rerr := c.read(bufio.NewReaderSize(out, 1<<20), ex, onFrame)
		out.Close()
		werr := proc.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return
		}
		switch {
		case werr != nil:
			c.err = fmt.Errorf("rpicam: %s exited: %v: %s", c.o.Command, werr, stderr.String())
		case rerr != nil && !errors.Is(rerr, io.EOF):
			c.err = fmt.Errorf("rpicam: reading %s's stream: %w", c.o.Command, rerr)
		default:
			c.err = fmt.Errorf("rpicam: %s ended its stream: %s", c.o.Command, stderr.String())
		}
	}()
	return nil
}

// read decodes pictures until the stream ends.
func (c *Camera) read(r *bufio.Reader, ex *executor.Executor, onFrame func(camera.Frame)) error {
	var seq uint64
	for {
		data, err := NextJPEG(r)
		if err != nil {
			return err
		}
		at := time.Now()
		f, err := decode(data)
		if err != nil {
			continue // a damaged picture: the next one is whole
		}
		f.Time, f.Seq = at, seq
		seq++
		ex.Post(func() {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if !closed {
				onFrame(f)
			}
		})
	}
}

// Close stops rpicam-vid and the stream.
func (c *Camera) Close() error {
	c.mu.Lock()
	proc, done := c.proc, c.done
	if proc == nil {
		c.mu.Unlock()
		return nil
	}
	c.closed, c.proc = true, nil
	c.mu.Unlock()
	_ = proc.Signal(syscall.SIGKILL)
	<-done
	return nil
}

// Err returns why a stream ended on its own, nil while it runs or after
// Close.
func (c *Camera) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// NextJPEG reads one JPEG picture (SOI to EOI) from an MJPEG stream,
// skipping anything before its SOI. It walks the marker segments and the
// entropy-coded data after SOS, where a 0xFF byte is always followed by a
// stuffed 0x00 or a restart marker, so an EOI is found only where it ends
// the picture.
func NextJPEG(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	// Find SOI.
	prev := byte(0)
	for {
		b, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if prev == 0xFF && b == 0xD8 {
			break
		}
		prev = b
	}
	buf.Write([]byte{0xFF, 0xD8})
	haveFF := false // the entropy-coded data ended on a marker's 0xFF
	for {
		// A marker: 0xFF (fill bytes allowed), then its code.
		if !haveFF {
			b, err := r.ReadByte()
			if err != nil {
				return nil, unexpected(err)
			}
			if b != 0xFF {
				return nil, fmt.Errorf("rpicam: JPEG: byte 0x%02x where a marker was expected", b)
			}
		}
		haveFF = false
		var err error
		code := byte(0xFF)
		for code == 0xFF {
			if code, err = r.ReadByte(); err != nil {
				return nil, unexpected(err)
			}
		}
		buf.Write([]byte{0xFF, code})
		switch {
		case code == 0xD9: // EOI
			return buf.Bytes(), nil
		case code >= 0xD0 && code <= 0xD7 || code == 0x01: // no length
			continue
		}
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, unexpected(err)
		}
		n := int(l[0])<<8 | int(l[1])
		if n < 2 {
			return nil, fmt.Errorf("rpicam: JPEG: segment 0x%02x of length %d", code, n)
		}
		buf.Write(l[:])
		if _, err := io.CopyN(&buf, r, int64(n-2)); err != nil {
			return nil, unexpected(err)
		}
		if code != 0xDA { // not SOS
			continue
		}
		// Entropy-coded data up to the next marker that is not a stuffed
		// 0x00 or a restart.
		for {
			b, err := r.ReadByte()
			if err != nil {
				return nil, unexpected(err)
			}
			if b != 0xFF {
				buf.WriteByte(b)
				continue
			}
			next, err := r.Peek(1)
			if err != nil {
				return nil, unexpected(err)
			}
			if next[0] == 0x00 || next[0] >= 0xD0 && next[0] <= 0xD7 {
				buf.WriteByte(b)
				nb, _ := r.ReadByte()
				buf.WriteByte(nb)
				continue
			}
			haveFF = true
			break
		}
	}
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decode turns a JPEG into an RGB frame.
func decode(data []byte) (camera.Frame, error) {
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return camera.Frame{}, err
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	f := camera.Frame{Width: w, Height: h, Stride: 3 * w, Data: make([]byte, 3*w*h)}
	switch im := img.(type) {
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := im.YCbCrAt(b.Min.X+x, b.Min.Y+y)
				r, g, bl, _ := c.RGBA()
				i := y*f.Stride + 3*x
				f.Data[i], f.Data[i+1], f.Data[i+2] = byte(r>>8), byte(g>>8), byte(bl>>8)
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				i := y*f.Stride + 3*x
				f.Data[i], f.Data[i+1], f.Data[i+2] = byte(r>>8), byte(g>>8), byte(bl>>8)
			}
		}
	}
	return f, nil
}

// tail keeps the last lines rpicam-vid wrote to its standard error, for
// error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

var _ camera.Camera = (*Camera)(nil)
