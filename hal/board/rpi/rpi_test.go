package rpi

import "testing"

func TestHeader(t *testing.T) {
	h := Header()
	if len(h) != 40 {
		t.Fatalf("%d pins, want 40", len(h))
	}
	seen := map[int]bool{}
	for i, p := range h {
		if p.Number != i+1 {
			t.Errorf("pin %d at index %d", p.Number, i)
		}
		if p.IsGPIO() {
			if seen[p.BCM] {
				t.Errorf("GPIO%d on two pins", p.BCM)
			}
			seen[p.BCM] = true
		} else if p.Name != "3V3" && p.Name != "5V" && p.Name != "GND" {
			t.Errorf("pin %d: power pin named %q", p.Number, p.Name)
		}
	}
	for bcm := 0; bcm <= 27; bcm++ {
		if !seen[bcm] {
			t.Errorf("GPIO%d missing", bcm)
		}
	}
	if n := len(GPIOs()); n != 28 {
		t.Errorf("GPIOs() has %d pins, want 28", n)
	}
	var ground int
	for _, p := range h {
		if p.Name == "GND" {
			ground++
		}
	}
	if ground != 8 {
		t.Errorf("%d ground pins, want 8", ground)
	}
}

func TestPhysical(t *testing.T) {
	// Spot checks against pinout.xyz.
	for _, tc := range []struct{ bcm, phys int }{
		{2, 3}, {3, 5}, {4, 7}, {14, 8}, {15, 10}, {17, 11}, {18, 12}, {27, 13},
		{22, 15}, {23, 16}, {10, 19}, {9, 21}, {11, 23}, {8, 24}, {7, 26},
		{0, 27}, {1, 28}, {5, 29}, {6, 31}, {12, 32}, {13, 33}, {19, 35},
		{16, 36}, {26, 37}, {20, 38}, {21, 40},
	} {
		if got, ok := Physical(tc.bcm); !ok || got != tc.phys {
			t.Errorf("Physical(%d) = %d, %v; want %d", tc.bcm, got, ok, tc.phys)
		}
		if p, ok := Pin(tc.phys); !ok || p.BCM != tc.bcm {
			t.Errorf("Pin(%d).BCM = %d, want %d", tc.phys, p.BCM, tc.bcm)
		}
	}
	for _, bcm := range []int{-1, 28, 40} {
		if _, ok := Physical(bcm); ok {
			t.Errorf("Physical(%d) found a pin", bcm)
		}
	}
	if _, ok := Pin(41); ok {
		t.Error("Pin(41) found a pin")
	}
}

func TestHeaderIsACopy(t *testing.T) {
	h := Header()
	h[0].Name = "x"
	if Header()[0].Name != "3V3" {
		t.Error("Header() returned the package's table")
	}
}
