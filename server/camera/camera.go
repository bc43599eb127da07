package camera

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
)

// Limits of the encoded stream.
const (
	// MaxFPS is how many frames a second are encoded at most.
	MaxFPS = 15
	// MaxWidth is the widest picture sent; wider frames are scaled down.
	MaxWidth = 640
	// Quality is the JPEG quality.
	Quality = 75
)

// Topic is the WebSocket topic of the frames.
const Topic = "camera"

// Frame is one encoded picture.
type Frame struct {
	Seq           uint64
	Width, Height int
	Stamp         float64
	JPEG          []byte
	src           *msg.Image
}

// Stream keeps the latest frame of a camera and wakes the clients waiting
// for the next one. It is safe for concurrent use.
type Stream struct {
	mu      sync.Mutex
	cur     *Frame
	next    chan struct{} // closed when a frame replaces cur
	lastEnc time.Time
}

// NewStream returns a stream with no frame yet.
func NewStream() *Stream { return &Stream{next: make(chan struct{})} }

// Put encodes img (rgb8) as the stream's newest frame, unless the last
// one was encoded less than 1/MaxFPS ago; it returns the frame, nil when
// skipped.
func (s *Stream) Put(img *msg.Image, now time.Time) (*Frame, error) {
	s.mu.Lock()
	if !s.lastEnc.IsZero() && now.Sub(s.lastEnc) < time.Second/MaxFPS {
		s.mu.Unlock()
		return nil, nil
	}
	s.lastEnc = now
	seq := uint64(0)
	if s.cur != nil {
		seq = s.cur.Seq + 1
	}
	s.mu.Unlock()
	data, w, h, err := Encode(img, MaxWidth)
	if err != nil {
		return nil, err
	}
	f := &Frame{Seq: seq, Width: w, Height: h, JPEG: data, src: img,
		Stamp: float64(img.Header.Stamp.Sec) + float64(img.Header.Stamp.Nanosec)/1e9}
	s.mu.Lock()
	s.cur = f
	close(s.next)
	s.next = make(chan struct{})
	s.mu.Unlock()
	return f, nil
}

// Latest returns the newest frame (nil before the first) and a channel
// closed when a newer one arrives.
func (s *Stream) Latest() (*Frame, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.next
}

// Encode encodes an rgb8 image as JPEG, scaled down (nearest pixel) to at
// most maxWidth wide.
func Encode(img *msg.Image, maxWidth int) ([]byte, int, int, error) {
	w, h, step := int(img.Width), int(img.Height), int(img.Step)
	if img.Encoding != msg.ImageRGB8 {
		return nil, 0, 0, fmt.Errorf("camera: encoding %q, want %s", img.Encoding, msg.ImageRGB8)
	}
	if w <= 0 || h <= 0 || step < 3*w || len(img.Data) < (h-1)*step+3*w {
		return nil, 0, 0, fmt.Errorf("camera: %dx%d image with step %d has %d bytes", w, h, step, len(img.Data))
	}
	ow, oh := w, h
	if maxWidth > 0 && w > maxWidth {
		ow, oh = maxWidth, max(1, h*maxWidth/w)
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := 0; y < oh; y++ {
		sy := y * h / oh
		for x := 0; x < ow; x++ {
			sx := x * w / ow
			i, o := sy*step+3*sx, y*out.Stride+4*x
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = img.Data[i], img.Data[i+1], img.Data[i+2], 255
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: Quality}); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), ow, oh, nil
}

// Register takes the head camera's frames from the bus and offers them on
// the WebSocket topic "camera" and as GET /api/camera/head. Frames are
// decoded and encoded off the executor, one at a time: while one is being
// encoded, newer ones replace each other and only the newest is taken. A
// frame published in the same process arrives as a copy of its value, so
// the publisher never encodes its pixels into JSON for this subscription;
// one from the wire arrives as JSON, decoded off the executor.
func Register(h *feature.Host) *Stream {
	s := NewStream()
	h.Topics(Topic)
	in := make(chan arrival, 1)
	h.SubscribeValues(msg.TopicHeadCameraImageRaw, bus.QoS{Depth: 1}, func(_ string, v any) {
		a := arrival{at: h.Exec.Now()}
		switch v := v.(type) {
		case *msg.Image:
			a.img = v
		case json.RawMessage:
			a.data = v
		default:
			return
		}
		select {
		case in <- a:
		default:
			select { // replace the waiting frame with this newer one
			case <-in:
			default:
			}
			select {
			case in <- a:
			default:
			}
		}
	})
	done := make(chan struct{})
	stopped := make(chan struct{})
	h.Add(feature.Funcs{
		OnStart: func() error {
			go func() {
				defer close(stopped)
				for {
					select {
					case <-done:
						return
					case a := <-in:
						s.take(h, a)
					}
				}
			}()
			return nil
		},
		OnStop: func() { close(done); <-stopped },
	})
	h.HandleHTTP("GET /api/camera/head", http.HandlerFunc(s.serveMJPEG))
	return s
}

// take encodes one frame and publishes it on the topic.
func (s *Stream) take(h *feature.Host, a arrival) {
	img := a.img
	if img == nil {
		img = new(msg.Image)
		if err := json.Unmarshal(a.data, img); err != nil {
			return
		}
	}
	f, err := s.Put(img, a.at)
	if err != nil {
		h.Log.Warn("camera frame not encoded", "source", "camera", "err", err)
		return
	}
	if f == nil {
		return
	}
	update := map[string]any{"camera": "head", "width": f.Width, "height": f.Height, "seq": f.Seq,
		"stamp": f.Stamp, "jpeg": base64.StdEncoding.EncodeToString(f.JPEG)}
	h.Exec.Post(func() { h.Gateway.Publish(Topic, update) })
}

// arrival is a frame, as a value (img) or as its JSON message (data), and
// when the executor received it.
type arrival struct {
	img  *msg.Image
	data []byte
	at   time.Time
}

// Boundary separates the MJPEG stream's parts.
const Boundary = "saintframe"

// serveMJPEG writes every new frame as one part of a
// multipart/x-mixed-replace response until the client goes away.
func (s *Stream) serveMJPEG(w http.ResponseWriter, r *http.Request) {
	fps, width := MaxFPS, 0
	if v := r.URL.Query().Get("fps"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 30 {
			http.Error(w, "fps: want 1–30 frames a second, got "+strconv.Quote(v), http.StatusBadRequest)
			return
		}
		fps = n
	}
	if v := r.URL.Query().Get("width"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 16 || n > MaxWidth {
			http.Error(w, fmt.Sprintf("width: want 16–%d pixels, got %q", MaxWidth, v), http.StatusBadRequest)
			return
		}
		width = n
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "multipart/x-mixed-replace; boundary="+Boundary)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	ctx := r.Context()
	var last uint64
	sent := false
	for {
		f, next := s.Latest()
		if f != nil && (!sent || f.Seq != last) {
			data := f.JPEG
			if width > 0 && width < f.Width {
				d, _, _, err := Encode(f.src, width)
				if err == nil {
					data = d
				}
			}
			if _, err := fmt.Fprintf(w, "--%s\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", Boundary, len(data)); err != nil {
				return
			}
			if _, err := w.Write(append(data, '\r', '\n')); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			last, sent = f.Seq, true
			if !wait(ctx, time.Second/time.Duration(fps)) {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

// wait sleeps d unless ctx ends first (the HTTP edge: wall time).
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
