package ssd1306

import (
	"image"
	"image/color"
	"image/draw"
)

// Frame is a 1-bit framebuffer laid out as the SSD1306's display RAM: page
// p (rows 8p to 8p+7) is Width bytes, byte x holds column x with bit 0 on
// top. It implements draw.Image (color.Gray: anything brighter than mid-grey
// is lit), so the image packages can draw into it.
//
// Drawing outside the frame is clipped, never an error. Frame tracks which
// pages changed since Dev.Flush last sent them.
type Frame struct {
	w, h  int
	pix   []byte
	dirty uint64 // bit p: page p changed
}

// NewFrame returns a dark frame w×h pixels; h is rounded up to a whole page.
func NewFrame(w, h int) *Frame {
	pages := (h + 7) / 8
	return &Frame{w: w, h: h, pix: make([]byte, w*pages), dirty: 1<<pages - 1}
}

// Width and Height return the frame's size in pixels.
func (f *Frame) Width() int  { return f.w }
func (f *Frame) Height() int { return f.h }

// Bytes returns the frame in display-RAM order; it aliases the frame.
func (f *Frame) Bytes() []byte { return f.pix }

// ColorModel implements image.Image.
func (f *Frame) ColorModel() color.Model { return color.GrayModel }

// Bounds implements image.Image.
func (f *Frame) Bounds() image.Rectangle { return image.Rect(0, 0, f.w, f.h) }

// At implements image.Image: white for lit, black for dark.
func (f *Frame) At(x, y int) color.Color {
	if f.Pixel(x, y) {
		return color.Gray{Y: 0xFF}
	}
	return color.Gray{}
}

// Set implements draw.Image.
func (f *Frame) Set(x, y int, c color.Color) {
	f.SetPixel(x, y, color.GrayModel.Convert(c).(color.Gray).Y >= 0x80)
}

// Pixel reports whether (x, y) is lit; outside the frame is dark.
func (f *Frame) Pixel(x, y int) bool {
	if x < 0 || x >= f.w || y < 0 || y >= f.h {
		return false
	}
	return f.pix[y/8*f.w+x]>>(y%8)&1 != 0
}

// SetPixel lights (true) or darkens (false) (x, y).
func (f *Frame) SetPixel(x, y int, on bool) {
	if x < 0 || x >= f.w || y < 0 || y >= f.h {
		return
	}
	i, bit := y/8*f.w+x, byte(1)<<(y%8)
	old := f.pix[i]
	if on {
		f.pix[i] |= bit
	} else {
		f.pix[i] &^= bit
	}
	if f.pix[i] != old {
		f.dirty |= 1 << (y / 8)
	}
}

// Clear darkens every pixel.
func (f *Frame) Clear() { f.Fill(false) }

// Fill lights or darkens every pixel.
func (f *Frame) Fill(on bool) {
	var v byte
	if on {
		v = 0xFF
	}
	for i := range f.pix {
		if f.pix[i] != v {
			f.pix[i] = v
			f.dirty |= 1 << (i / f.w)
		}
	}
}

// Line draws a line from (x0, y0) to (x1, y1), both ends included
// (Bresenham).
func (f *Frame) Line(x0, y0, x1, y1 int, on bool) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		f.SetPixel(x0, y0, on)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

// Rect draws the outline of r (r.Max excluded).
func (f *Frame) Rect(r image.Rectangle, on bool) {
	r = r.Canon()
	if r.Empty() {
		return
	}
	f.Line(r.Min.X, r.Min.Y, r.Max.X-1, r.Min.Y, on)
	f.Line(r.Min.X, r.Max.Y-1, r.Max.X-1, r.Max.Y-1, on)
	f.Line(r.Min.X, r.Min.Y, r.Min.X, r.Max.Y-1, on)
	f.Line(r.Max.X-1, r.Min.Y, r.Max.X-1, r.Max.Y-1, on)
}

// FillRect lights or darkens every pixel of r.
func (f *Frame) FillRect(r image.Rectangle, on bool) {
	r = r.Canon().Intersect(f.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			f.SetPixel(x, y, on)
		}
	}
}

// Text draws s with the built-in 5×7 font, its top-left corner at (x, y),
// lit on a dark cell (the blank column and row around each glyph are
// cleared, so text overwrites what was there). A newline goes down a line
// of 8 rows. It returns the x after the last character.
func (f *Frame) Text(x, y int, s string) int {
	x0 := x
	for _, c := range s {
		if c == '\n' {
			x, y = x0, y+GlyphHeight+1
			continue
		}
		g := glyph(c)
		for col := 0; col < Advance; col++ {
			var bits byte
			if col < GlyphWidth {
				bits = g[col]
			}
			for row := 0; row <= GlyphHeight; row++ {
				f.SetPixel(x+col, y+row, bits>>row&1 != 0)
			}
		}
		x += Advance
	}
	return x
}

// TextWidth returns how many pixels Text takes for a line of s.
func TextWidth(s string) int { return len([]rune(s)) * Advance }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

var _ draw.Image = (*Frame)(nil)
