package camera

import "fmt"

// YUYVToRGB converts a YUYV 4:2:2 picture (V4L2_PIX_FMT_YUYV: Y0 U Y1 V for
// each pair of pixels, srcStride bytes per row) to packed RGB in dst, 3·w
// bytes per row. It uses the BT.601 limited-range equations, which is what
// UVC and the Pi's camera stack deliver.
func YUYVToRGB(dst, src []byte, w, h, srcStride int) error {
	if w%2 != 0 {
		return fmt.Errorf("camera: YUYV width %d: want an even width", w)
	}
	if srcStride < 2*w || len(src) < (h-1)*srcStride+2*w {
		return fmt.Errorf("camera: YUYV data: %d bytes for %dx%d with stride %d", len(src), w, h, srcStride)
	}
	if len(dst) < 3*w*h {
		return fmt.Errorf("camera: RGB buffer: %d bytes, want %d", len(dst), 3*w*h)
	}
	o := 0
	for y := 0; y < h; y++ {
		row := src[y*srcStride : y*srcStride+2*w]
		for x := 0; x < len(row); x += 4 {
			u, v := int(row[x+1])-128, int(row[x+3])-128
			for _, yy := range [2]byte{row[x], row[x+2]} {
				c := 298 * (int(yy) - 16)
				dst[o] = clip((c + 409*v + 128) >> 8)
				dst[o+1] = clip((c - 100*u - 208*v + 128) >> 8)
				dst[o+2] = clip((c + 516*u + 128) >> 8)
				o += 3
			}
		}
	}
	return nil
}

func clip(v int) byte {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}
