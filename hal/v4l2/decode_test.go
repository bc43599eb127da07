//go:build linux

package v4l2

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

func TestDecodeYUYVWithPaddedRows(t *testing.T) {
	// 2×2 pixels, rows padded to 8 bytes: white then black.
	data := []byte{235, 128, 235, 128, 0xee, 0xee, 0xee, 0xee, 16, 128, 16, 128, 0xee, 0xee, 0xee, 0xee}
	f, err := decode(PixelFormatYUYV, data, 2, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if f.Width != 2 || f.Height != 2 || f.Stride != 6 {
		t.Fatalf("frame %dx%d stride %d", f.Width, f.Height, f.Stride)
	}
	if r, g, b := f.RGB(1, 0); r != 255 || g != 255 || b != 255 {
		t.Errorf("top right %d,%d,%d, want white", r, g, b)
	}
	if r, g, b := f.RGB(0, 1); r != 0 || g != 0 || b != 0 {
		t.Errorf("bottom left %d,%d,%d, want black", r, g, b)
	}
}

func TestDecodeMJPEG(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 16, 8))
	for y := 0; y < 8; y++ {
		for x := 0; x < 16; x++ {
			c := color.RGBA{200, 30, 30, 255}
			if x >= 8 {
				c = color.RGBA{30, 30, 200, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	f, err := decode(PixelFormatMJPEG, buf.Bytes(), 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Width != 16 || f.Height != 8 || len(f.Data) != 16*8*3 {
		t.Fatalf("frame %dx%d, %d bytes", f.Width, f.Height, len(f.Data))
	}
	if r, _, b := f.RGB(2, 4); r < 150 || b > 80 {
		t.Errorf("left pixel r %d b %d, want red", r, b)
	}
	if r, _, b := f.RGB(13, 4); b < 150 || r > 80 {
		t.Errorf("right pixel r %d b %d, want blue", r, b)
	}
	if _, err := decode(PixelFormatMJPEG, buf.Bytes()[:20], 0, 0, 0); err == nil {
		t.Error("a torn JPEG decoded")
	}
	if _, err := decode(fourcc("RGB3"), nil, 1, 1, 3); err == nil {
		t.Error("an unknown pixel format decoded")
	}
}
