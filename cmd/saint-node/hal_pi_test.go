package main

import (
	"os"
	"strings"
	"testing"
)

// TestPiBoardOffAPi checks that --hal pi on a machine that is not a
// Raspberry Pi fails with an error naming what is missing, instead of
// starting or panicking.
func TestPiBoardOffAPi(t *testing.T) {
	if model, err := os.ReadFile("/proc/device-tree/model"); err == nil && strings.HasPrefix(string(model), "Raspberry Pi") {
		t.Skip("this is a Raspberry Pi; the smoke tests cover it")
	}
	b, err := openPiBoard("")
	if err == nil {
		t.Fatalf("openPiBoard on a machine that is not a Pi returned a board: %+v", b.Info())
	}
	for _, want := range []string{"not a Raspberry Pi", "/proc/device-tree/model"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
