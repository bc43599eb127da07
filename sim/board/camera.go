package simboard

import (
	"github.com/saint-os/saint/hal/camera"
)

// CameraBoard is a simulated board with a camera fitted: the board itself
// plus camera.Provider, which the head role looks for. The simulator's head
// camera (sim/twin/camera) renders from the head model's pose, which the
// board does not know, so whoever assembles the robot fits it.
type CameraBoard struct {
	*Board
	cam camera.Camera
}

// WithCamera returns b with cam fitted.
func WithCamera(b *Board, cam camera.Camera) *CameraBoard {
	return &CameraBoard{Board: b, cam: cam}
}

// Camera implements camera.Provider.
func (c *CameraBoard) Camera() (camera.Camera, error) {
	if c.cam == nil {
		return nil, camera.ErrNotFitted
	}
	return c.cam, nil
}
