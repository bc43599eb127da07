package msg

// HeadState is HeadState.msg, published on TopicHeadState. Angles are in
// degrees.
type HeadState struct {
	Pan          float32 `json:"pan"`  // -180 to 180
	Tilt         float32 `json:"tilt"` // -90 to 90
	Roll         float32 `json:"roll"` // -45 to 45
	CameraActive bool    `json:"camera_active"`
	// Jaw is the jaw opening, 0 closed to 1 open, on heads that have one.
	// Not in HeadState.msg: the router's head target controls a jaw, so
	// the state reports it.
	Jaw float32 `json:"jaw,omitempty"`
	// EyesPan and EyesTilt are where the eyes look, degrees, on heads
	// with eye servos (the router's "eyes_pan" and "eyes_tilt").
	EyesPan  float32 `json:"eyes_pan,omitempty"`
	EyesTilt float32 `json:"eyes_tilt,omitempty"`
}

// HeadCommand is HeadCommand.msg, taken on TopicHeadCmd: where to point
// the head, in degrees, and how fast to get there.
type HeadCommand struct {
	Pan   float32 `json:"pan"`
	Tilt  float32 `json:"tilt"`
	Roll  float32 `json:"roll"`
	Speed float32 `json:"speed"` // 0.0 to 1.0 of the head's maximum
	// Jaw, 0 closed to 1 open, is an addition to HeadCommand.msg for the
	// router's "jaw" output (face capture's jawOpen); heads without a jaw
	// ignore it.
	Jaw float32 `json:"jaw,omitempty"`
	// EyesPan (positive looks left) and EyesTilt (positive looks up) turn
	// the eyes, degrees, on heads with eye servos; others ignore them.
	// Additions to HeadCommand.msg for the router's head "eyes".
	EyesPan  float32 `json:"eyes_pan,omitempty"`
	EyesTilt float32 `json:"eyes_tilt,omitempty"`
}
