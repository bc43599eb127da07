package camera

import "testing"

func TestYUYVToRGBReferenceColours(t *testing.T) {
	// BT.601 limited range: Y 16 is black, 235 white; (Y 81, U 90, V 240)
	// is pure red, (145, 54, 34) green, (41, 240, 110) blue.
	for _, tc := range []struct {
		y, u, v byte
		r, g, b byte
	}{
		{16, 128, 128, 0, 0, 0},
		{235, 128, 128, 255, 255, 255},
		{81, 90, 240, 255, 0, 0},
		{145, 54, 34, 0, 255, 1},
		{41, 240, 110, 0, 0, 255},
	} {
		src := []byte{tc.y, tc.u, tc.y, tc.v}
		dst := make([]byte, 6)
		if err := YUYVToRGB(dst, src, 2, 1, 4); err != nil {
			t.Fatal(err)
		}
		for p := 0; p < 2; p++ {
			r, g, b := dst[3*p], dst[3*p+1], dst[3*p+2]
			if absDiff(r, tc.r) > 2 || absDiff(g, tc.g) > 2 || absDiff(b, tc.b) > 2 {
				t.Errorf("YUV(%d,%d,%d) pixel %d = RGB(%d,%d,%d), want (%d,%d,%d)", tc.y, tc.u, tc.v, p, r, g, b, tc.r, tc.g, tc.b)
			}
		}
	}
}

func TestYUYVToRGBRejectsShortBuffers(t *testing.T) {
	if err := YUYVToRGB(make([]byte, 12), make([]byte, 7), 4, 1, 8); err == nil {
		t.Error("short source accepted")
	}
	if err := YUYVToRGB(make([]byte, 11), make([]byte, 8), 4, 1, 8); err == nil {
		t.Error("short destination accepted")
	}
	if err := YUYVToRGB(make([]byte, 9), make([]byte, 6), 3, 1, 6); err == nil {
		t.Error("odd width accepted")
	}
}

func absDiff(a, b byte) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
