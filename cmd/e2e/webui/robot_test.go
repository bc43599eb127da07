package webui

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/kinematics"
)

// drawnLimbs is window.saintRobotView as the robot page keeps it.
type drawnLimbs struct {
	Limbs map[string]struct {
		Points [][3]float64 `json:"points"`
	} `json:"limbs"`
	// Drawn is, per view and limb, the pixels the page joined.
	Drawn map[string]map[string][][2]int `json:"drawn"`
}

func (p *page) robotView() drawnLimbs {
	p.t.Helper()
	var v drawnLimbs
	if err := json.Unmarshal([]byte(p.eval(`JSON.stringify(window.saintRobotView || {})`)), &v); err != nil {
		p.t.Fatal(err)
	}
	return v
}

// pixel is the canvas's colour at (x, y).
func (p *page) pixel(x, y int) [3]int {
	p.t.Helper()
	var c [3]int
	s := p.eval(fmt.Sprintf(`(() => { const d = document.getElementById('robot-canvas').getContext('2d').getImageData(%d, %d, 1, 1).data;
		return JSON.stringify([d[0], d[1], d[2]]); })()`, x, y))
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		p.t.Fatal(err)
	}
	return c
}

// The limbs' colours on the robot page (left blue, right orange).
var (
	leftColour  = [3]int{0x1f, 0x5f, 0xbf}
	rightColour = [3]int{0xd9, 0x82, 0x2b}
)

func mid(a, b [2]int) (int, int) { return (a[0] + b[0]) / 2, (a[1] + b[1]) / 2 }

// simLimbTruth reads the simulator's ground truth of a humanoid limb (the
// sim topic's limb_<instance>) over the WebSocket API.
func simLimbTruth(t *testing.T, s *sim, instance string) []float64 {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+s.ws+"/saint", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(stepTimeout))
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "topics": []string{"sim"}}); err != nil {
		t.Fatal(err)
	}
	for {
		var m struct {
			Type string                     `json:"type"`
			Node string                     `json:"node"`
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("reading the sim topic: %v", err)
		}
		if raw, ok := m.Data["limb_"+instance]; ok && m.Type == "state" && m.Node == "sim" {
			var js struct {
				Position []float64 `json:"position"`
			}
			if err := json.Unmarshal(raw, &js); err != nil {
				t.Fatal(err)
			}
			return js.Position
		}
	}
}

// The robot page draws the humanoid robot type: its five limbs, each a
// chain of links in its colour where the page says it drew them, placed
// where the physics has the limb, and they move on the canvas when the
// joints move (an action played through the motor middleware).
func TestRobotPageDrawsTheHumanoid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs saint-sim and Chromium")
	}
	t.Parallel()
	ctx := browser(t)
	s := startSim(t, "--robot-type", "pi_plus-S-12L8A0G2H0W", "--adopt")
	api := dialAPI(t, s, "")
	p := newPage(t, ctx)
	p.open(s.url("/robot"), "#robot-canvas")
	p.until("the five limbs drawn in both views", `(() => { const v = window.saintRobotView;
		return !!v && ['front', 'side'].every((n) => v.drawn[n] && Object.keys(v.drawn[n]).length === 5); })()`)

	// Each limb's links are on the canvas in its colour: the middle of the
	// shank, the forearm (between joints, clear of the joint dots).
	v := p.robotView()
	for limb, c := range map[string][3]int{"leg_left": leftColour, "arm_left": leftColour, "leg_right": rightColour, "arm_right": rightColour} {
		pts := v.Drawn["front"][limb]
		x, y := mid(pts[len(pts)-3], pts[len(pts)-2])
		if limb == "arm_left" || limb == "arm_right" {
			x, y = mid(pts[len(pts)-2], pts[len(pts)-1])
		}
		if got := p.pixel(x, y); got != c {
			t.Errorf("%s: the canvas at (%d, %d) is %v, want the limb's colour %v", limb, x, y, got, c)
		}
	}
	// Hanging unpowered, the arms point down: the left hand is below its
	// shoulder.
	hand0 := v.Limbs["arm_left"].Points[4]
	if sh := v.Limbs["arm_left"].Points[0]; !(hand0[2] < sh[2]-0.25) {
		t.Fatalf("left hand at %v, shoulder at %v: the unpowered arm does not hang", hand0, sh)
	}
	front0 := v.Drawn["front"]["arm_left"]
	fx, fy := mid(front0[3], front0[4])

	// arms_forward: the arms reach forward, the forearms bent up, and stay
	// there (the action ends in KEEP_MODE).
	// (once the root middleware has found the limbs' motors).
	bustest.CheckFor(t, 30*time.Second, 250*time.Millisecond, func() error {
		var played struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
		}
		data, err := api.send(map[string]any{"type": "command", "target": "motors", "action": "play_action",
			"params": map[string]any{"name": "arms_forward", "client": "webui-test"}})
		if err == nil {
			err = json.Unmarshal(data, &played)
		}
		if err == nil && !played.Success {
			err = fmt.Errorf("play_action arms_forward: %s", played.Message)
		}
		return err
	})
	p.until("the left hand drawn forward", `(() => { const l = window.saintRobotView.limbs.arm_left; return l && l.points[4][0] > 0.2; })()`)

	// What the page draws is where the physics holds the arm: the hand by
	// the kinematics at the simulator's true joint angles.
	arm, _ := kinematics.HumanoidLimb(kinematics.ArmLeft)
	bustest.CheckFor(t, 10*time.Second, 200*time.Millisecond, func() error {
		truth := arm.Chain(simLimbTruth(t, s, kinematics.ArmLeft))[4]
		drawn := p.robotView().Limbs["arm_left"].Points[4]
		if d := math.Hypot(math.Hypot(truth[0]-drawn[0], truth[1]-drawn[1]), truth[2]-drawn[2]); d > 0.01 {
			return fmt.Errorf("the page's left hand at %v, the physics' at %v: %.3f m apart", drawn, truth, d)
		}
		return nil
	})

	// On the canvas: the forearm left where it hung (that pixel is no
	// longer the arm's colour) and is drawn where it is now.
	v = p.robotView()
	if got := p.pixel(fx, fy); got == leftColour {
		t.Errorf("the canvas at (%d, %d), where the left forearm hung, still shows it", fx, fy)
	}
	side := v.Drawn["side"]["arm_left"]
	sx, _ := mid(side[3], side[4])
	if sx <= side[0][0]+20 {
		t.Errorf("side view: the left forearm's middle at x %d, not in front of the shoulder at %d", sx, side[0][0])
	}
	front := v.Drawn["front"]["arm_left"]
	x, y := mid(front[3], front[4])
	if got := p.pixel(x, y); got != leftColour {
		t.Errorf("the canvas at (%d, %d), the left forearm now, is %v, want %v", x, y, got, leftColour)
	}
	p.shot("robot")

	// A limb whose node goes quiet (reset to unadopted: its role stops)
	// is drawn grey where it was last reported, and the page says so.
	var reset struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	if err := api.call("management", "reset_node", map[string]any{"node_id": "sim-neck"}, &reset); err != nil || !reset.Success {
		t.Fatalf("reset_node sim-neck: %v %+v", err, reset)
	}
	p.until("the neck drawn as stale", `(window.saintRobotView.stale || []).includes('neck')`)
	if got := p.eval(`document.getElementById('robot-status').textContent`); !strings.Contains(got, "No joint states") || !strings.Contains(got, "neck") {
		t.Errorf("the status says %q, want that the neck is not heard from", got)
	}
	neck := p.robotView().Drawn["front"]["neck"]
	x, y = mid(neck[0], neck[1])
	if got, grey := p.pixel(x, y), [3]int{0xb8, 0xbe, 0xc9}; got != grey {
		t.Errorf("the neck at (%d, %d) is %v, want the stale grey %v", x, y, got, grey)
	}
	if stale := p.robotView(); len(stale.Drawn["front"]) != 5 {
		t.Errorf("%d limbs drawn after the neck went quiet, want all 5 (the neck where it was)", len(stale.Drawn["front"]))
	}
}

// TestAdoptPageOffersTheRobotTypesRoles: run as the humanoid, the adopt
// page offers only the five limbs its robot configuration declares, and
// says why.
func TestAdoptPageOffersTheRobotTypesRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs saint-sim and Chromium")
	}
	t.Parallel()
	ctx := browser(t)
	s := startSim(t, "--robot-type", "pi_plus-S-12L8A0G2H0W")
	api := dialAPI(t, s, "")
	bustest.CheckFor(t, stepTimeout, 50*time.Millisecond, func() error {
		var u nodeList
		if err := api.call("management", "list_unadopted", nil, &u); err != nil {
			return err
		}
		if !u.has("sim-neck") {
			return fmt.Errorf("sim-neck not announced yet: %+v", u)
		}
		return nil
	})
	p := newPage(t, ctx)
	p.open(s.url("/nodes/adopt/sim-neck"), "#adopt-form")
	got := p.eval(`[...document.querySelectorAll('#adopt-form input[name=role]')].map((r) => r.value).join(' ')`)
	if want := "limb:leg_left limb:leg_right limb:arm_left limb:arm_right limb:neck"; got != want {
		t.Errorf("the adopt page offers %q, want the humanoid's limbs %q", got, want)
	}
	if note := p.eval(`(document.querySelector('#adopt-robot-type') || {textContent: ''}).textContent`); !strings.Contains(note, "pi_plus-S-12L8A0G2H0W") {
		t.Errorf("the adopt page's note %q does not name the robot type", note)
	}
}
