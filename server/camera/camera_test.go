package camera

import (
	"bytes"
	"image/jpeg"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

func frame(w, h int) *msg.Image {
	data := make([]byte, 3*w*h)
	for i := range data {
		data[i] = byte(i * 7)
	}
	return &msg.Image{Width: uint32(w), Height: uint32(h), Step: uint32(3 * w), Encoding: msg.ImageRGB8, Data: data}
}

func TestEncodeScalesAndRefusesBadImages(t *testing.T) {
	data, w, h, err := Encode(frame(1280, 720), MaxWidth)
	if err != nil || w != 640 || h != 360 {
		t.Fatalf("Encode 1280x720: %dx%d %v, want 640x360", w, h, err)
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil || img.Bounds().Dx() != 640 || img.Bounds().Dy() != 360 {
		t.Fatalf("decoded %v %v", img.Bounds(), err)
	}
	bad := frame(16, 16)
	bad.Encoding = "mono8"
	if _, _, _, err := Encode(bad, 0); err == nil {
		t.Error("mono8 accepted")
	}
	short := frame(16, 16)
	short.Data = short.Data[:100]
	if _, _, _, err := Encode(short, 0); err == nil {
		t.Error("a short image accepted")
	}
}

func TestStreamLimitsTheRateAndWakesWaiters(t *testing.T) {
	s := NewStream()
	t0 := time.Unix(1_800_000_000, 0)
	if f, _ := s.Latest(); f != nil {
		t.Fatal("a frame before the first Put")
	}
	_, next := s.Latest()
	f, err := s.Put(frame(64, 48), t0)
	if err != nil || f == nil || f.Seq != 0 {
		t.Fatalf("first Put: %+v %v", f, err)
	}
	select {
	case <-next:
	default:
		t.Error("a waiter was not woken by the new frame")
	}
	if f, _ := s.Put(frame(64, 48), t0.Add(time.Second/MaxFPS/2)); f != nil {
		t.Error("a frame sooner than 1/MaxFPS after the last was encoded")
	}
	if f, _ := s.Put(frame(64, 48), t0.Add(time.Second/MaxFPS)); f == nil || f.Seq != 1 {
		t.Errorf("the next frame: %+v", f)
	}
}

// BenchmarkEncode640 is the server's cost of one camera frame: a 640×480
// rgb8 picture to JPEG.
func BenchmarkEncode640(b *testing.B) {
	img := frame(640, 480)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := Encode(img, MaxWidth); err != nil {
			b.Fatal(err)
		}
	}
}
