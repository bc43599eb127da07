package layout

import "image/color"

// Colours the window draws with. They live here, not in the drawing code,
// so a test reading a screenshot can look for them.
var (
	Background = color.RGBA{16, 18, 24, 255}
	Panel      = color.RGBA{26, 29, 38, 255}
	Grid       = color.RGBA{48, 53, 66, 255}
	Axis       = color.RGBA{92, 100, 120, 255}
	// Truth is the ground truth (the tracked base's marker, the arms'
	// simulated links); nothing else is drawn in it, so its presence at a
	// pixel means the robot is there.
	Truth      = color.RGBA{255, 140, 0, 255}
	TruthTrail = color.RGBA{150, 84, 18, 255}
	// Reported is what the nodes report (odometry, joint states, pitch).
	Reported      = color.RGBA{0, 190, 255, 255}
	ReportedTrail = color.RGBA{0, 92, 130, 255}
	Good          = color.RGBA{60, 200, 90, 255}
	Warn          = color.RGBA{240, 200, 40, 255}
	Bad           = color.RGBA{235, 50, 50, 255}
	OLEDLit       = color.RGBA{140, 215, 255, 255}
	OLEDDark      = color.RGBA{6, 10, 18, 255}
)

// TruthMarkerRadius is the radius in pixels of the tracked base's ground
// truth marker at the arena's scale (px per m): the body's 0.18 m, at
// least 6 px.
func TruthMarkerRadius(scale float64) float64 { return max(6, 0.18*scale) }
