package app

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/vector"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/viz/layout"
	"github.com/saint-os/saint/viz/plot"
	"github.com/saint-os/saint/viz/scene"
	"github.com/saint-os/saint/viz/teleop"
)

// The debug font's cell.
const (
	charW = 6
	lineH = 16
)

func text(dst *ebiten.Image, s string, x, y int) { ebitenutil.DebugPrintAt(dst, s, x, y) }

func line(dst *ebiten.Image, x0, y0, x1, y1, w float64, c color.Color) {
	vector.StrokeLine(dst, float32(x0), float32(y0), float32(x1), float32(y1), float32(w), c, false)
}

func fillRect(dst *ebiten.Image, r layout.Rect, c color.Color) {
	vector.DrawFilledRect(dst, float32(r.X), float32(r.Y), float32(r.W), float32(r.H), c, false)
}

func disc(dst *ebiten.Image, x, y, r float64, c color.Color) {
	vector.DrawFilledCircle(dst, float32(x), float32(y), float32(r), c, false)
}

func ring(dst *ebiten.Image, x, y, r, w float64, c color.Color) {
	vector.StrokeCircle(dst, float32(x), float32(y), float32(r), float32(w), c, false)
}

// panel draws a view's background and title and returns the area inside.
func panel(dst *ebiten.Image, r layout.Rect, title string) layout.Rect {
	in := r.Inset(3)
	fillRect(dst, in, layout.Panel)
	text(dst, title, in.X+6, in.Y+2)
	return layout.Rect{X: in.X + 6, Y: r.Y + layout.TitleHeight, W: in.W - 12, H: r.H - layout.TitleHeight - 6}
}

func (g *game) drawHeader(dst *ebiten.Image, l layout.Layout) {
	fillRect(dst, l.Header, layout.Panel)
	conn := "connected"
	if g.c.Err() != nil {
		conn = "DISCONNECTED"
	}
	s := fmt.Sprintf("SAINT.OS viz  %s (%s)", g.o.Server, conn)
	if g.sc.HasSim {
		s += fmt.Sprintf("  sim t=%.1fs", g.sc.SimTime)
	}
	text(dst, s, 6, 3)
	estop, c := "E-STOP: clear", layout.Good
	if g.sc.Router.EStopActive {
		estop, c = "E-STOP: ACTIVE by "+g.sc.Router.EStopSource, layout.Bad
	} else if !g.sc.HasRouter {
		estop, c = "E-STOP: ?", layout.Warn
	}
	x := l.Width - len(estop)*charW - 12
	fillRect(dst, layout.Rect{X: x - 6, Y: 2, W: len(estop)*charW + 12, H: layout.Header - 4}, c)
	text(dst, estop, x, 3)
	errText := g.c.LastError()
	if errText == "" {
		errText = g.applyErr
	}
	if errText != "" {
		msgX := 6 + (len(s)+3)*charW
		room := (x - 12 - msgX) / charW
		if room > 8 {
			text(dst, clip("last error: "+errText, room), msgX, 3)
		}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 2 {
		return ""
	}
	return s[:n-1] + "~"
}

func drawArena(dst *ebiten.Image, l layout.Layout, a layout.Arena, sc *scene.Scene) {
	panel(dst, l.Arena, "Arena (top down): orange = ground truth, blue = odometry")
	r := a.Rect
	step := a.GridStep(40)
	x0, y1 := a.ToWorld(float64(r.X), float64(r.Y))
	x1, y0 := a.ToWorld(float64(r.X+r.W), float64(r.Y+r.H))
	for x := math.Ceil(x0/step) * step; x <= x1; x += step {
		px, _ := a.ToPixel(x, 0)
		c := layout.Grid
		if math.Abs(x) < step/2 {
			c = layout.Axis
		}
		line(dst, px, float64(r.Y), px, float64(r.Y+r.H), 1, c)
	}
	for y := math.Ceil(y0/step) * step; y <= y1; y += step {
		_, py := a.ToPixel(0, y)
		c := layout.Grid
		if math.Abs(y) < step/2 {
			c = layout.Axis
		}
		line(dst, float64(r.X), py, float64(r.X+r.W), py, 1, c)
	}
	text(dst, fmt.Sprintf("grid %g m", step), r.X+4, r.Y+r.H-lineH)
	drawTrail(dst, a, sc.OdomTrail, layout.ReportedTrail)
	drawTrail(dst, a, sc.TruthTrail, layout.TruthTrail)
	scale := a.Scale()
	rad := layout.TruthMarkerRadius(scale)
	if sc.HasOdom {
		px, py := a.ToPixel(sc.Odom.X, sc.Odom.Y)
		ring(dst, px, py, rad+3, 2, layout.Reported)
		line(dst, px+math.Cos(sc.Odom.Heading)*(rad+3), py-math.Sin(sc.Odom.Heading)*(rad+3),
			px+math.Cos(sc.Odom.Heading)*(rad+12), py-math.Sin(sc.Odom.Heading)*(rad+12), 2, layout.Reported)
	}
	if sc.HasTruth {
		p := sc.Truth
		px, py := a.ToPixel(p.X, p.Y)
		// The two tracks either side of the body.
		cos, sin := math.Cos(p.Heading), math.Sin(p.Heading)
		for _, side := range []float64{-1, 1} {
			ox, oy := -sin*side*rad, -cos*side*rad
			line(dst, px+ox-cos*rad*1.1, py-oy+sin*rad*1.1, px+ox+cos*rad*1.1, py-oy-sin*rad*1.1, max(3, rad/3), layout.Axis)
		}
		disc(dst, px, py, rad, layout.Truth)
		line(dst, px+cos*rad*0.45, py-sin*rad*0.45, px+cos*rad*1.5, py-sin*rad*1.5, 2, color.White)
	}
	info := "no ground truth on this server (topic sim)"
	if sc.HasTruth {
		info = fmt.Sprintf("truth  x %+.2f  y %+.2f  hdg %+4.0f°  %+.2f m/s", sc.Truth.X, sc.Truth.Y, degrees(sc.Truth.Heading), sc.Tracks.Speed)
	}
	text(dst, info, r.X+4, r.Y+2)
	if sc.HasOdom {
		text(dst, fmt.Sprintf("odom   x %+.2f  y %+.2f  hdg %+4.0f°", sc.Odom.X, sc.Odom.Y, degrees(sc.Odom.Heading)), r.X+4, r.Y+2+lineH)
	}
}

func drawTrail(dst *ebiten.Image, a layout.Arena, t scene.Trail, c color.Color) {
	for i := 1; i < len(t); i++ {
		x0, y0 := a.ToPixel(t[i-1].X, t[i-1].Y)
		x1, y1 := a.ToPixel(t[i].X, t[i].Y)
		line(dst, x0, y0, x1, y1, 2, c)
	}
}

func drawStatus(dst *ebiten.Image, r layout.Rect, sc *scene.Scene) {
	in := panel(dst, r, "Nodes and routes")
	y := in.Y
	for _, id := range sc.NodeIDs() {
		if y+lineH > in.Y+in.H {
			return
		}
		n := sc.Nodes[id]
		c := layout.Warn
		switch n.State {
		case "ACTIVE":
			c = layout.Good
		case "ERROR", "OFFLINE":
			c = layout.Bad
		}
		disc(dst, float64(in.X+5), float64(y+lineH/2), 4, c)
		text(dst, clip(fmt.Sprintf("%-14s %-8s %s %s", id, n.Role, n.State, n.Message), in.W/charW-3), in.X+14, y)
		y += lineH
	}
	y += 4
	if sc.HasRouter {
		for _, o := range sc.Router.Outputs {
			if y+lineH > in.Y+in.H {
				return
			}
			route := "idle"
			if len(o.RouteIDs) > 0 {
				route = strings.Join(o.RouteIDs, " + ")
			}
			text(dst, clip(fmt.Sprintf("%-10s <- %s", o.Target, route), in.W/charW-1), in.X, y)
			y += lineH
		}
	}
	if len(sc.Nodes) == 0 && !sc.HasRouter {
		text(dst, "waiting for node status and routes...", in.X, y)
	}
}

func drawBalance(dst *ebiten.Image, r layout.Rect, sc *scene.Scene) {
	in := panel(dst, r, "Balancing base (side)")
	ground := float64(in.Y + in.H - 3*lineH)
	line(dst, float64(in.X), ground, float64(in.X+in.W), ground, 1, layout.Axis)
	wheelR := math.Min(float64(in.W)/8, float64(in.H)/6)
	cx, cy := float64(in.X+in.W/2), ground-wheelR
	body := math.Min(float64(in.H)-3*lineH-2*wheelR-4, float64(in.W)/2)
	if sc.HasBalance {
		p := sc.Balance.Pitch * math.Pi / 180
		line(dst, cx, cy, cx+math.Sin(p)*body, cy-math.Cos(p)*body, 3, layout.Reported)
	}
	if sc.HasBalanceTruth {
		b := sc.BalanceTruth
		line(dst, cx, cy, cx+math.Sin(b.Pitch)*body, cy-math.Cos(b.Pitch)*body, 8, layout.Truth)
		ring(dst, cx, cy, wheelR, 3, color.White)
		line(dst, cx, cy, cx+math.Cos(b.Wheel[0])*wheelR, cy-math.Sin(b.Wheel[0])*wheelR, 2, color.White)
		text(dst, fmt.Sprintf("pitch %+5.1f°  wheel %+5.1f rad/s", b.Pitch*180/math.Pi, (b.WheelRate[0]+b.WheelRate[1])/2), in.X, int(ground)+2)
	} else {
		ring(dst, cx, cy, wheelR, 3, layout.Axis)
	}
	if sc.HasBalance {
		s := sc.Balance
		text(dst, fmt.Sprintf("%s  speed %+.2f / cmd %+.2f m/s", s.State, s.Speed, s.TargetSpeed), in.X, int(ground)+2+lineH)
	} else {
		text(dst, "no balance telemetry", in.X, int(ground)+2+lineH)
	}
}

func drawArms(dst *ebiten.Image, r layout.Rect, sc *scene.Scene) {
	in := panel(dst, r, "Arms (front | side)")
	half := in.W / 2
	// Both views: 1 m across, the robot's base at the bottom.
	scale := math.Min(float64(half), float64(in.H-lineH)) / 1.0
	views := []struct {
		ox       int
		horizon  func(x, y float64) float64 // world → screen horizontal
		leftSide float64
	}{
		{in.X, func(x, y float64) float64 { return -y }, 1},
		{in.X + half, func(x, y float64) float64 { return x - 0.3 }, 0},
	}
	base := float64(in.Y + in.H - lineH - 2)
	for _, v := range views {
		cx := float64(v.ox) + float64(half)/2
		toPx := func(x, y, z float64) (float64, float64) { return cx + v.horizon(x, y)*scale, base - z*scale*0.9 }
		tx, ty := toPx(0, 0, 0.15)
		bx, by := toPx(0, 0, 0.75)
		line(dst, tx, ty, bx, by, 0.24*scale, layout.Grid)
		for _, side := range []string{msg.ArmLeft, msg.ArmRight} {
			if st, ok := sc.Arms[side]; ok && len(st.JointPositions) > 0 {
				pts := scene.ArmChain(scene.DefaultArm(side), scene.Degrees(st.JointPositions))
				for i := 1; i < len(pts); i++ {
					x0, y0 := toPx(pts[i-1][0], pts[i-1][1], pts[i-1][2])
					x1, y1 := toPx(pts[i][0], pts[i][1], pts[i][2])
					line(dst, x0, y0, x1, y1, 2, layout.Reported)
				}
			}
			tr, ok := sc.ArmTruth[side]
			if !ok || len(tr.Joints) == 0 {
				continue
			}
			pts := append(append([][3]float64{}, tr.Joints...), tr.Tip)
			for i := 1; i < len(pts); i++ {
				x0, y0 := toPx(pts[i-1][0], pts[i-1][1], pts[i-1][2])
				x1, y1 := toPx(pts[i][0], pts[i][1], pts[i][2])
				line(dst, x0, y0, x1, y1, 5, layout.Truth)
				disc(dst, x0, y0, 3, color.White)
			}
			// The gripper's fingers, gap to scale (at least 3 px).
			gx, gy := toPx(tr.Tip[0], tr.Tip[1], tr.Tip[2])
			gap := math.Max(3, tr.Gripper*scale)
			c := color.Color(color.White)
			if tr.Holding {
				c = layout.Good
			}
			line(dst, gx-gap/2, gy, gx-gap/2, gy+8, 2, c)
			line(dst, gx+gap/2, gy, gx+gap/2, gy+8, 2, c)
		}
	}
	y := in.Y + in.H - lineH
	for i, side := range []string{msg.ArmLeft, msg.ArmRight} {
		tr, ok := sc.ArmTruth[side]
		s := side + ": -"
		if ok {
			s = fmt.Sprintf("%s grip %.0fmm", side, tr.Gripper*1000)
		}
		text(dst, clip(s, half/charW), in.X+i*half, y)
	}
}

// drawHumanoid draws the humanoid's limbs from the front and from its
// right side: the torso on its test stand (through the limbs' mounts), the
// truth's links thick in orange, the reported ones thin in blue over them,
// the head a ring with a dot where it faces, a foot a bar where the toes
// point.
func drawHumanoid(dst *ebiten.Image, l layout.Layout, sc *scene.Scene) {
	in := panel(dst, l.Humanoid, "Humanoid (front | side)")
	front, side := l.HumanoidFigures()
	for _, f := range []layout.Figure{front, side} {
		px := func(p [3]float64) (float64, float64) { return f.ToPixel(p) }
		x0, y0 := px([3]float64{0, -layout.HumanoidWidth / 2, 0})
		x1, _ := px([3]float64{0, layout.HumanoidWidth / 2, 0})
		if f.Side {
			x0, y0 = px([3]float64{-layout.HumanoidWidth / 2, 0, 0})
			x1, _ = px([3]float64{layout.HumanoidWidth / 2, 0, 0})
		}
		line(dst, x0, y0, x1, y0, 1, layout.Axis)
		caption := "front"
		if f.Side {
			caption = "side (its right)"
		}
		text(dst, caption, f.Rect.X, f.Rect.Y+f.Rect.H)
		drawTorso(dst, f, px)
		for _, limbs := range []struct {
			m     map[string]scene.Limb
			c     color.Color
			width float64
		}{{sc.LimbTruth, layout.Truth, 5}, {sc.Limbs, layout.Reported, 2}} {
			// Seen from the right, the left limbs are behind: drawn first.
			for _, name := range []string{kinematics.LegLeft, kinematics.ArmLeft, kinematics.Neck, kinematics.LegRight, kinematics.ArmRight} {
				limb, ok := limbs.m[name]
				if !ok || len(limb.Points) < 2 {
					continue
				}
				drawLimb(dst, name, limb, px, limbs.c, limbs.width)
			}
		}
	}
	if !sc.HasHumanoid() {
		text(dst, "no humanoid limbs (joint_states, sim)", in.X, in.Y)
	}
}

// drawTorso draws the test stand and the torso between the limbs' mounts
// (kinematics.HumanoidLimb): a post behind the pelvis, the pelvis through
// the hips, up to the shoulders and the neck.
func drawTorso(dst *ebiten.Image, f layout.Figure, px func([3]float64) (float64, float64)) {
	mount := func(name string) [3]float64 {
		k, _ := kinematics.HumanoidLimb(name)
		return [3]float64(k.Base)
	}
	hipL, hipR := mount(kinematics.LegLeft), mount(kinematics.LegRight)
	shL, shR := mount(kinematics.ArmLeft), mount(kinematics.ArmRight)
	neck := mount(kinematics.Neck)
	// The stand: a post from the floor behind the robot up to the pelvis,
	// and the bar that holds it.
	const behind = -0.18
	bx, by := px([3]float64{behind, 0, 0})
	tx, ty := px([3]float64{behind, 0, hipL[2]})
	cx, cy := px([3]float64{0, 0, hipL[2]})
	line(dst, bx, by, tx, ty, 4, layout.Grid)
	line(dst, tx, ty, cx, cy, 4, layout.Grid)
	if f.Side {
		x0, y0 := px([3]float64{-0.06, 0, hipL[2]})
		x1, y1 := px([3]float64{0.06, 0, neck[2]})
		vector.StrokeRect(dst, float32(x0), float32(y1), float32(x1-x0), float32(y0-y1), 2, layout.Axis, false)
		return
	}
	pts := [][3]float64{hipR, hipL, shL, {0, neck[1] + (shL[1]-neck[1])/2, neck[2]}, {0, neck[1] + (shR[1]-neck[1])/2, neck[2]}, shR}
	for i := range pts {
		ax, ay := px(pts[i])
		bx, by := px(pts[(i+1)%len(pts)])
		line(dst, ax, ay, bx, by, 2, layout.Axis)
	}
}

// drawLimb draws one limb's links in c: a leg or an arm as a chain through
// its joints (a leg with its foot), the neck up to the head's ring.
func drawLimb(dst *ebiten.Image, name string, l scene.Limb, px func([3]float64) (float64, float64), c color.Color, w float64) {
	pts := l.Points
	if name == kinematics.Neck {
		base, tip := pts[len(pts)-2], pts[len(pts)-1]
		ax, ay := px(pts[0])
		bx, by := px(base)
		line(dst, ax, ay, bx, by, w, c)
		tx, ty := px(tip)
		r := math.Hypot(tx-bx, ty-by) / 2
		mid := [3]float64{(base[0] + tip[0]) / 2, (base[1] + tip[1]) / 2, (base[2] + tip[2]) / 2}
		mx, my := px(mid)
		ring(dst, mx, my, r, w/2+1, c)
		half := math.Sqrt((tip[0]-base[0])*(tip[0]-base[0])+(tip[1]-base[1])*(tip[1]-base[1])+(tip[2]-base[2])*(tip[2]-base[2])) / 2
		ex, ey := px([3]float64{mid[0] + l.Facing[0]*half, mid[1] + l.Facing[1]*half, mid[2] + l.Facing[2]*half})
		disc(dst, ex, ey, w/2+1.5, c)
		return
	}
	for i := 1; i < len(pts); i++ {
		ax, ay := px(pts[i-1])
		bx, by := px(pts[i])
		line(dst, ax, ay, bx, by, w, c)
	}
	if name == kinematics.LegLeft || name == kinematics.LegRight {
		sole := pts[len(pts)-1]
		const foot = 0.08 // m, the foot's glyph: the model's foot has no length forward
		ax, ay := px(sole)
		bx, by := px([3]float64{sole[0] + l.Facing[0]*foot, sole[1] + l.Facing[1]*foot, sole[2] + l.Facing[2]*foot})
		line(dst, ax, ay, bx, by, w, c)
	}
}

func drawHead(dst *ebiten.Image, r layout.Rect, sc *scene.Scene, tp *teleop.Teleop) {
	in := panel(dst, r, "Head (pan / tilt / roll)")
	cx, cy := float64(in.X+in.W/2), float64(in.Y)+float64(in.H-3*lineH)/2
	rad := math.Min(float64(in.W), float64(in.H-3*lineH)) * 0.38
	face := func(pan, tilt, roll float64, c color.Color, w float64) {
		ring(dst, cx, cy, rad, w, c)
		// Eyes and nose move across the face as it pans and tilts (seen
		// from the front: panned to its left, the face is on the right;
		// tilted down, lower); the line through the eyes turns with the
		// roll.
		right, down := scene.FaceOffset(pan, tilt)
		ex, ey := cx+right*rad*0.7, cy+down*rad*0.7
		ox, oy := math.Cos(roll)*rad*0.35, -math.Sin(roll)*rad*0.35
		disc(dst, ex-ox, ey-oy, rad*0.1, c)
		disc(dst, ex+ox, ey+oy, rad*0.1, c)
		line(dst, ex-ox*1.6, ey-oy*1.6, ex+ox*1.6, ey+oy*1.6, 1, c)
	}
	if sc.HasHead {
		h := sc.Head
		face(float64(h.Pan)*math.Pi/180, float64(h.Tilt)*math.Pi/180, float64(h.Roll)*math.Pi/180, layout.Reported, 2)
	}
	y := in.Y + in.H - 3*lineH
	if sc.HasHeadTruth {
		a := sc.HeadTruth.Angles
		face(a[0], a[1], a[2], layout.Truth, 3)
		text(dst, fmt.Sprintf("truth    %+4.0f %+4.0f %+4.0f°", a[0]*180/math.Pi, a[1]*180/math.Pi, a[2]*180/math.Pi), in.X, y)
	}
	if sc.HasHead {
		h := sc.Head
		text(dst, fmt.Sprintf("reported %+4.0f %+4.0f %+4.0f°", h.Pan, h.Tilt, h.Roll), in.X, y+lineH)
	}
	pan, tilt := tp.HeadTarget()
	text(dst, fmt.Sprintf("IJKL target %+4.0f %+4.0f°", pan, tilt), in.X, y+2*lineH)
}

func drawConsole(dst *ebiten.Image, r layout.Rect, sc *scene.Scene) {
	in := panel(dst, r, "Console SSD1306 128x64")
	px := max(1, min(in.W/128, in.H/64))
	screen := layout.Rect{X: in.X + (in.W-128*px)/2, Y: in.Y, W: 128 * px, H: 64 * px}
	fillRect(dst, screen, layout.OLEDDark)
	if fb := sc.Console; len(fb) == 128*64/8 {
		for page := 0; page < 8; page++ {
			for x := 0; x < 128; x++ {
				b := fb[page*128+x]
				for bit := 0; bit < 8; bit++ {
					if b>>bit&1 != 0 {
						fillRect(dst, layout.Rect{X: screen.X + x*px, Y: screen.Y + (page*8+bit)*px, W: px, H: px}, layout.OLEDLit)
					}
				}
			}
		}
		return
	}
	text(dst, "no framebuffer on", screen.X+6, screen.Y+6)
	text(dst, "this server (console)", screen.X+6, screen.Y+6+lineH)
}

func drawPlots(dst *ebiten.Image, r layout.Rect, sc *scene.Scene) {
	in := panel(dst, r, fmt.Sprintf("Signals, last %g s", sc.Series[0].Window))
	cols := 2
	rows := (len(sc.Series) + cols - 1) / cols
	cellW, cellH := in.W/cols, (in.H-lineH)/rows
	for i, s := range sc.Series {
		x := in.X + (i%cols)*cellW
		y := in.Y + (i/cols)*cellH
		plotArea := layout.Rect{X: x + 40, Y: y + lineH, W: cellW - 48, H: cellH - lineH - 4}
		fillRect(dst, plotArea, layout.Background)
		ax := plot.AxesFor(s, float64(plotArea.X), float64(plotArea.Y), float64(plotArea.W), float64(plotArea.H), sc.Now, 0.2)
		for _, age := range ax.TimeTicks(5) {
			tx, _ := ax.Point(ax.End-age, ax.Lo)
			line(dst, tx, float64(plotArea.Y), tx, float64(plotArea.Y+plotArea.H), 1, layout.Grid)
		}
		lo, hi := ax.Lo, ax.Hi
		text(dst, valueText(hi), x, plotArea.Y-4)
		text(dst, valueText(lo), x, plotArea.Y+plotArea.H-12)
		label := s.Name + " (" + s.Unit + ")"
		if _, v, ok := s.Last(); ok {
			label += " " + valueText(v)
		}
		text(dst, clip(label, (cellW-40)/charW), x+40, y)
		for j := 1; j < s.Len(); j++ {
			t0, v0 := s.Sample(j - 1)
			t1, v1 := s.Sample(j)
			x0, y0 := ax.Point(t0, v0)
			x1, y1 := ax.Point(t1, v1)
			if x0 < float64(plotArea.X) {
				continue
			}
			line(dst, x0, y0, x1, y1, 1.5, layout.Good)
		}
		// The time scale under the bottom row.
		if i/cols == rows-1 {
			for _, age := range ax.TimeTicks(5) {
				tx, _ := ax.Point(ax.End-age, ax.Lo)
				label := fmt.Sprintf("-%gs", age)
				if age == 0 {
					label = "now"
				}
				text(dst, label, int(tx)-len(label)*charW/2, plotArea.Y+plotArea.H+2)
			}
		}
	}
}

// valueText formats a plotted value in at most six characters.
func valueText(v float64) string {
	switch a := math.Abs(v); {
	case a < 0.0005:
		return "0"
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

func drawHelp(dst *ebiten.Image, r layout.Rect) {
	in := panel(dst, r, "Keys")
	for i, s := range []string{
		"W A S D / arrows  drive the tracks",
		"I J K L           move the head",
		"space             E-STOP",
		"C                 clear the e-stop",
	} {
		if (i+1)*lineH > in.H {
			return
		}
		text(dst, s, in.X, in.Y+i*lineH)
	}
}

// degrees is a heading in degrees in (-180, 180].
func degrees(rad float64) float64 {
	d := math.Mod(rad*180/math.Pi, 360)
	if d > 180 {
		d -= 360
	} else if d <= -180 {
		d += 360
	}
	return d
}
