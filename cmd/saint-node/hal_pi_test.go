package main

import (
	"os"
	"strings"
	"testing"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/rpicam"
	"github.com/saint-os/saint/hal/v4l2"
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

// A CSI camera is streamed by rpicam-vid, a USB camera through V4L2.
func TestOpenPiCamera(t *testing.T) {
	if c, err := openPiCamera(board.Peripheral{Type: "camera", Address: "csi0"}); err != nil {
		t.Error(err)
	} else if _, ok := c.(*rpicam.Camera); !ok {
		t.Errorf("csi0 → %T, want *rpicam.Camera", c)
	}
	if c, err := openPiCamera(board.Peripheral{Type: "camera", Address: "video2"}); err != nil {
		t.Error(err)
	} else if _, ok := c.(*v4l2.Camera); !ok {
		t.Errorf("video2 → %T, want *v4l2.Camera", c)
	}
	if _, err := openPiCamera(board.Peripheral{Type: "camera", Address: "csiX"}); err == nil {
		t.Error("csiX accepted")
	}
}
