//go:build linux

package v4l2

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/saint-os/saint/hal/camera"
	"github.com/saint-os/saint/hal/executor"
)

// Options configure a Camera.
type Options struct {
	// Path is the device node; empty means /dev/video0.
	Path string
	// Buffers is how many buffers the driver fills in turn; 0 means 4.
	Buffers int
}

// Camera is a V4L2 capture device. Open and Close are called on the
// executor frames go to.
type Camera struct {
	opts Options

	mu     sync.Mutex // guards stream against Close racing the reader
	stream *stream
}

// New returns a camera on the device o names. Nothing is opened until
// Open.
func New(o Options) *Camera {
	if o.Path == "" {
		o.Path = "/dev/video0"
	}
	if o.Buffers <= 0 {
		o.Buffers = 4
	}
	return &Camera{opts: o}
}

// Info is what VIDIOC_QUERYCAP reports.
type Info struct {
	Driver, Card, BusInfo string
	Capabilities          uint32 // the device node's (device_caps when given)
}

// stream is one open session: the fd, the mapped buffers and the reader.
type stream struct {
	fd     int
	wake   int // eventfd that ends the reader's poll
	bufs   [][]byte
	width  int
	height int
	stride int
	pixfmt uint32
	done   chan struct{}
}

// Open implements camera.Camera.
func (c *Camera) Open(cfg camera.Config, ex *executor.Executor, onFrame func(camera.Frame)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream != nil {
		return camera.ErrOpen
	}
	fd, err := unix.Open(c.opts.Path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("v4l2: open %s: %w", c.opts.Path, err)
	}
	s := &stream{fd: fd, wake: -1, done: make(chan struct{})}
	if err := s.setup(c.opts, cfg); err != nil {
		s.release()
		return fmt.Errorf("v4l2: %s: %w", c.opts.Path, err)
	}
	c.stream = s
	clk := ex.Clock()
	// One frame at a time waits for the executor: when it falls behind,
	// newer frames are dropped (Seq shows the gap) rather than queued.
	var pending atomic.Bool
	go s.read(func(f camera.Frame, age time.Duration) {
		f.Time = clk.Now().Add(-age)
		if !pending.CompareAndSwap(false, true) {
			return
		}
		ex.Post(func() {
			pending.Store(false)
			c.mu.Lock()
			live := c.stream == s
			c.mu.Unlock()
			if live {
				onFrame(f)
			}
		})
	})
	return nil
}

// Close implements camera.Camera: it stops the reader, then the stream.
func (c *Camera) Close() error {
	c.mu.Lock()
	s := c.stream
	c.stream = nil
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	var one = [8]byte{1}
	_, _ = unix.Write(s.wake, one[:])
	<-s.done
	typ := int32(bufTypeVideoCapture)
	err := ioctl(s.fd, vidiocStreamOff, unsafe.Pointer(&typ))
	s.release()
	if err != nil {
		return fmt.Errorf("v4l2: VIDIOC_STREAMOFF: %w", err)
	}
	return nil
}

// Query reports the device's identity and capabilities without streaming.
func (c *Camera) Query() (Info, error) {
	fd, err := unix.Open(c.opts.Path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Info{}, fmt.Errorf("v4l2: open %s: %w", c.opts.Path, err)
	}
	defer unix.Close(fd)
	return queryCap(fd)
}

func queryCap(fd int) (Info, error) {
	var cp capability
	if err := ioctl(fd, vidiocQueryCap, unsafe.Pointer(&cp)); err != nil {
		return Info{}, fmt.Errorf("VIDIOC_QUERYCAP: %w", err)
	}
	caps := cp.capabilities
	if caps&capDeviceCaps != 0 {
		caps = cp.deviceCaps
	}
	str := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	return Info{Driver: str(cp.driver[:]), Card: str(cp.card[:]), BusInfo: str(cp.busInfo[:]), Capabilities: caps}, nil
}

func (s *stream) setup(o Options, cfg camera.Config) error {
	info, err := queryCap(s.fd)
	if err != nil {
		return err
	}
	if info.Capabilities&capVideoCapture == 0 || info.Capabilities&capStreaming == 0 {
		return fmt.Errorf("%s (%s): capabilities %#x: want video capture with streaming I/O", info.Card, info.Driver, info.Capabilities)
	}
	var f format
	for _, pf := range []uint32{PixelFormatYUYV, PixelFormatMJPEG} {
		f = format{typ: bufTypeVideoCapture}
		p := f.pix()
		p.width, p.height, p.pixelformat, p.field = uint32(cfg.Width), uint32(cfg.Height), pf, fieldNone
		if err := ioctl(s.fd, vidiocSFmt, unsafe.Pointer(&f)); err != nil {
			return fmt.Errorf("VIDIOC_S_FMT: %w", err)
		}
		if f.pix().pixelformat == pf {
			break
		}
	}
	p := f.pix()
	s.width, s.height, s.pixfmt = int(p.width), int(p.height), p.pixelformat
	s.stride = int(p.bytesperline)
	switch s.pixfmt {
	case PixelFormatYUYV:
		if s.stride < 2*s.width {
			s.stride = 2 * s.width
		}
	case PixelFormatMJPEG:
	default:
		return fmt.Errorf("VIDIOC_S_FMT: the driver offers pixel format %q, want YUYV or MJPG", fourccString(s.pixfmt))
	}
	// Frame rate: a request, not every driver honours it.
	parm := streamParm{typ: bufTypeVideoCapture}
	tpf := &parm.capture().timeperframe
	tpf.numerator, tpf.denominator = 1000, uint32(cfg.FPS*1000)
	_ = ioctl(s.fd, vidiocSParm, unsafe.Pointer(&parm))

	req := requestBuffers{count: uint32(o.Buffers), typ: bufTypeVideoCapture, memory: memoryMMap}
	if err := ioctl(s.fd, vidiocReqBufs, unsafe.Pointer(&req)); err != nil {
		return fmt.Errorf("VIDIOC_REQBUFS: %w", err)
	}
	if req.count < 2 {
		return fmt.Errorf("VIDIOC_REQBUFS: the driver gave %d buffers, want at least 2", req.count)
	}
	for i := uint32(0); i < req.count; i++ {
		b := buffer{index: i, typ: bufTypeVideoCapture, memory: memoryMMap}
		if err := ioctl(s.fd, vidiocQueryBuf, unsafe.Pointer(&b)); err != nil {
			return fmt.Errorf("VIDIOC_QUERYBUF %d: %w", i, err)
		}
		m, err := unix.Mmap(s.fd, int64(b.offset()), int(b.length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return fmt.Errorf("mmap buffer %d: %w", i, err)
		}
		s.bufs = append(s.bufs, m)
		if err := ioctl(s.fd, vidiocQBuf, unsafe.Pointer(&b)); err != nil {
			return fmt.Errorf("VIDIOC_QBUF %d: %w", i, err)
		}
	}
	if s.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	typ := int32(bufTypeVideoCapture)
	if err := ioctl(s.fd, vidiocStreamOn, unsafe.Pointer(&typ)); err != nil {
		return fmt.Errorf("VIDIOC_STREAMON: %w", err)
	}
	return nil
}

// read is the capture goroutine: wait, dequeue, convert, requeue, hand
// over. age is how long ago the driver stamped the frame.
func (s *stream) read(deliver func(f camera.Frame, age time.Duration)) {
	defer close(s.done)
	fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
	var seq uint64
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 || fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return
		}
		b := buffer{typ: bufTypeVideoCapture, memory: memoryMMap}
		if err := ioctl(s.fd, vidiocDQBuf, unsafe.Pointer(&b)); err != nil {
			if errors.Is(err, unix.EAGAIN) {
				continue
			}
			return
		}
		f, convErr := s.convert(s.bufs[b.index][:b.bytesused])
		age := time.Duration(0)
		if b.flags&bufFlagTimestampMask == bufFlagTimestampMonotonic {
			var now unix.Timespec
			if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) == nil {
				age = time.Duration(now.Nano() - b.timestamp.Nano())
			}
		}
		if err := ioctl(s.fd, vidiocQBuf, unsafe.Pointer(&b)); err != nil {
			return
		}
		if convErr != nil {
			continue // a corrupt frame (a torn JPEG) is dropped
		}
		f.Seq = seq
		seq++
		deliver(f, age)
	}
}

// convert turns one filled buffer into an RGB frame.
func (s *stream) convert(data []byte) (camera.Frame, error) {
	return decode(s.pixfmt, data, s.width, s.height, s.stride)
}

// decode converts a YUYV or MJPEG picture to an RGB frame.
func decode(pixfmt uint32, data []byte, w, h, stride int) (camera.Frame, error) {
	switch pixfmt {
	case PixelFormatYUYV:
		f := camera.Frame{Width: w, Height: h, Stride: 3 * w, Data: make([]byte, 3*w*h)}
		return f, camera.YUYVToRGB(f.Data, data, w, h, stride)
	case PixelFormatMJPEG:
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			return camera.Frame{}, err
		}
		r := img.Bounds()
		rgba := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		draw.Draw(rgba, rgba.Bounds(), img, r.Min, draw.Src)
		f := camera.Frame{Width: r.Dx(), Height: r.Dy(), Stride: 3 * r.Dx(), Data: make([]byte, 3*r.Dx()*r.Dy())}
		for i, o := 0, 0; i < len(rgba.Pix); i, o = i+4, o+3 {
			copy(f.Data[o:o+3], rgba.Pix[i:i+3])
		}
		return f, nil
	}
	return camera.Frame{}, fmt.Errorf("v4l2: pixel format %q: want YUYV or MJPG", fourccString(pixfmt))
}

func (s *stream) release() {
	for _, m := range s.bufs {
		_ = unix.Munmap(m)
	}
	s.bufs = nil
	if s.wake >= 0 {
		_ = unix.Close(s.wake)
	}
	_ = unix.Close(s.fd)
}

func fourccString(v uint32) string {
	return string([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
}
