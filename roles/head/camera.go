package head

import (
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/camera"
)

// headCamera streams the board's camera (camera.Provider) on
// camera/image_raw as sensor_msgs/Image rgb8, at the configured resolution
// and frame rate, while the camera command has it enabled.
type headCamera struct {
	h       *Head
	cam     camera.Camera
	cfg     camera.Config
	on      bool
	stopped bool
}

func (c *headCamera) start(h *Head) {
	c.h, c.stopped = h, false
	cc := h.Env.Config.Camera
	if cc == nil || !cc.Enabled {
		return
	}
	c.cfg = camera.Config{Width: 640, Height: 480, FPS: 30}
	if len(cc.Resolution) == 2 {
		c.cfg.Width, c.cfg.Height = cc.Resolution[0], cc.Resolution[1]
	}
	if cc.Framerate > 0 {
		c.cfg.FPS = float64(cc.Framerate)
	}
	if err := c.cfg.Validate(); err != nil {
		h.Env.Log.Warn("camera configuration", "err", err)
		return
	}
	p, ok := h.Env.Board.(camera.Provider)
	if !ok {
		h.Env.Log.Warn("camera enabled in the configuration but the board has no camera")
		return
	}
	cam, err := p.Camera()
	if err != nil {
		h.Env.Log.Warn("camera", "err", err)
		return
	}
	c.cam = cam
	if h.params.CameraAutostart {
		c.enable(true)
	}
}

func (c *headCamera) active() bool { return c.on }

// enable starts or stops the stream, as the camera command asks.
func (c *headCamera) enable(on bool) {
	h := c.h
	if on == c.on || c.stopped {
		return
	}
	if c.cam == nil {
		if on {
			h.Env.Log.Warn("camera command ignored: no camera")
		}
		return
	}
	if !on {
		if err := c.cam.Close(); err != nil {
			h.Env.Log.Warn("camera close", "err", err)
		}
		c.on = false
		return
	}
	if err := c.cam.Open(c.cfg, h.Env.Exec, c.publish); err != nil {
		h.Env.Log.Warn("camera open", "err", err)
		return
	}
	c.on = true
}

func (c *headCamera) publish(f camera.Frame) {
	if !c.on {
		return
	}
	h := c.h
	_ = h.Env.Bus.Publish(h.Env.Prefix+"/camera/image_raw", msg.Image{
		Header: msg.Header{Stamp: msg.TimeOf(f.Time), FrameID: "head_camera"},
		Height: uint32(f.Height), Width: uint32(f.Width), Encoding: msg.ImageRGB8,
		Step: uint32(f.Stride), Data: f.Data,
	})
}

func (c *headCamera) stop() {
	c.enable(false)
	c.stopped = true
	c.cam = nil
}
