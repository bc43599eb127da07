package console_test

import (
	"image"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/ssd1306"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/roles/rolekit/roletest"
	"github.com/saint-os/saint/server/consolealerts"
	"github.com/saint-os/saint/server/router"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/robot"
)

// Console buttons (console.yaml).
const (
	consoleSelectPin = 5
	consoleBackPin   = 6
	consoleEStopPin  = 26
)

type consoleRig struct {
	roletest.Rig
	board *simboard.Board
	role  rolekit.Role
}

func newConsoleRig(t *testing.T, edit func(*roleconfig.Config)) *consoleRig {
	t.Helper()
	ex := executor.NewVirtual()
	b := mem.New()
	// The console board as the simulated robot has it; the console has no
	// physics, so the board alone is enough.
	board, err := simboard.New(&simboard.Options{Profile: simboard.Console, NodeID: robot.DefaultNodeID(robot.ConsolePart), Exec: ex})
	if err != nil {
		t.Fatal(err)
	}
	cfg := roletest.Config(t, "console")
	if edit != nil {
		edit(cfg)
	}
	role, err := roles.New("console")
	if err != nil {
		t.Fatal(err)
	}
	if err := role.Start(rolekit.Env{NodeID: "sim-console", Exec: ex, Bus: b, Board: board, Config: cfg,
		Prefix: msg.TopicPrefix(msg.RoleConsole, "")}); err != nil {
		t.Fatal(err)
	}
	return &consoleRig{Rig: roletest.Rig{T: t, Ex: ex, Bus: b}, board: board, role: role}
}

// press drives a button's pin to ground (pressed) or lets the pull-up
// take it high, with bounces: the contact chatters 1 ms apart bounce
// times before it settles.
func (g *consoleRig) press(bcm int, pressed bool, bounces int) {
	g.T.Helper()
	level := gpio.Level(!pressed)
	at := g.Ex.Now()
	for i := 0; i < 2*bounces; i++ {
		if err := g.board.SetInputAt(bcm, level == (i%2 == 0), at.Add(time.Duration(i)*time.Millisecond)); err != nil {
			g.T.Fatal(err)
		}
	}
	if err := g.board.SetInputAt(bcm, level, at.Add(time.Duration(2*bounces)*time.Millisecond)); err != nil {
		g.T.Fatal(err)
	}
}

// shows reports whether the panel shows s in the driver's font,
// anywhere, as dark-background text.
func (g *consoleRig) shows(s string) bool {
	img := g.board.SSD1306().Image()
	w := ssd1306.TextWidth(s)
	f := ssd1306.NewFrame(ssd1306.Width, 8)
	f.Text(0, 0, s)
	for y0 := 0; y0+ssd1306.GlyphHeight <= img.Bounds().Dy(); y0++ {
	next:
		for x0 := 0; x0+w <= img.Bounds().Dx(); x0++ {
			for y := 0; y < ssd1306.GlyphHeight; y++ {
				for x := 0; x < w; x++ {
					if (img.GrayAt(x0+x, y0+y).Y > 127) != f.Pixel(x, y) {
						continue next
					}
				}
			}
			return true
		}
	}
	return false
}

func (g *consoleRig) wantShown(texts ...string) {
	g.T.Helper()
	for _, s := range texts {
		if !g.shows(s) {
			g.T.Errorf("the display does not show %q", s)
		}
	}
}

func (g *consoleRig) wantHidden(texts ...string) {
	g.T.Helper()
	for _, s := range texts {
		if g.shows(s) {
			g.T.Errorf("the display still shows %q", s)
		}
	}
}

func TestConsoleStatusScreen(t *testing.T) {
	g := newConsoleRig(t, nil)
	g.Run(500 * time.Millisecond)
	if !g.board.SSD1306().Lit() {
		t.Fatal("the display is not lit")
	}
	g.wantShown("SAINT", "E-STOP: clear", "Battery: --", "Nodes: 0")
	for _, id := range []string{"sim-head", "sim-tracks", "sim-console"} {
		g.Publish(msg.NodeStatusTopic(id), msg.NodeStatus{NodeID: id, State: "ACTIVE"})
	}
	g.Publish(msg.TopicTracksPower, msg.PowerState{Voltage: 24.31, Current: 1.5, Power: 36.5, Present: true})
	g.Publish(msg.TopicRouterStatus, msg.RouteStatus{State: msg.RouterIdle, EStopActive: true, EStopSource: "safety"})
	g.Run(500 * time.Millisecond)
	g.wantShown("E-STOP: ACTIVE", "by safety", "Battery: 24.3 V", "Nodes: 3")
	g.wantHidden("E-STOP: clear", "Nodes: 0")
	// Nodes that stop reporting drop out after node_timeout_ms.
	g.Run(11 * time.Second)
	g.wantShown("Nodes: 0")
}

func TestConsoleShowsPushedText(t *testing.T) {
	g := newConsoleRig(t, nil)
	g.Publish(msg.TopicConsoleDisplay, msg.ConsoleDisplay{Page: "message", Title: "Hello", Lines: []string{"line one", "line two"}, Clear: true})
	g.Run(300 * time.Millisecond)
	g.wantShown("Hello", "line one", "line two")
	g.wantHidden("SAINT")
	// Without Clear, the lines given replace those at their positions.
	g.Publish(msg.TopicConsoleDisplay, msg.ConsoleDisplay{Page: "message", Lines: []string{"line 1"}})
	g.Run(300 * time.Millisecond)
	g.wantShown("Hello", "line 1", "line two")
	g.wantHidden("line one")
	g.Publish(msg.TopicConsoleDisplay, msg.ConsoleDisplay{Page: "status"})
	g.Run(300 * time.Millisecond)
	g.wantShown("SAINT")
	g.wantHidden("Hello")
}

func TestConsoleAlertsByPriority(t *testing.T) {
	g := newConsoleRig(t, nil)
	alert := func(level, text string) {
		g.Publish(msg.TopicConsoleAlerts, msg.ConsoleAlert{Level: level, Message: text, Source: "srv"})
		g.Run(300 * time.Millisecond)
	}
	alert(msg.AlertWarning, "servo hot")
	g.wantShown("! WARNING srv", "servo hot")
	alert(msg.AlertInfo, "hello")
	g.wantShown("servo hot") // an info does not hide a warning
	g.wantHidden("hello")
	alert(msg.AlertCritical, "battery cutoff")
	g.wantShown("! CRITICAL srv", "battery cutoff")
	// A critical alert stays until dismissed: back takes it away and the
	// next most urgent shows, the warning's 5 s now over: the info is
	// also gone (3 s), so the status page is back.
	g.Run(6 * time.Second)
	g.wantShown("battery cutoff")
	g.press(consoleBackPin, true, 3)
	g.Run(100 * time.Millisecond)
	g.press(consoleBackPin, false, 3)
	g.Run(300 * time.Millisecond)
	g.wantHidden("battery cutoff", "servo hot", "hello")
	g.wantShown("SAINT")
}

func TestConsoleButtonDebounce(t *testing.T) {
	g := newConsoleRig(t, nil)
	inputs := roletest.Collect[msg.ConsoleInput](t, g.Bus, g.Ex, msg.TopicConsoleInput)
	g.Run(100 * time.Millisecond)
	pressAt := g.Ex.Now()
	g.press(consoleSelectPin, true, 4)
	g.Run(200 * time.Millisecond)
	releaseAt := g.Ex.Now()
	g.press(consoleSelectPin, false, 4)
	g.Run(200 * time.Millisecond)
	want := []msg.ConsoleInput{
		{Control: "select", Kind: msg.InputButton, Event: msg.EventPress, Value: 1, Timestamp: float64(pressAt.UnixNano()) / 1e9},
		{Control: "select", Kind: msg.InputButton, Event: msg.EventRelease, Value: 0, Timestamp: float64(releaseAt.UnixNano()) / 1e9},
	}
	if !slices.Equal(*inputs, want) {
		t.Errorf("inputs %+v, want %+v", *inputs, want)
	}
	// A tap shorter than the debounce time that ends released is one
	// press and, when the window closes and the pin reads high, one
	// release.
	*inputs = nil
	g.press(consoleEStopPin, true, 0)
	g.Run(5 * time.Millisecond)
	g.press(consoleEStopPin, false, 0)
	g.Run(100 * time.Millisecond)
	if n := len(*inputs); n != 2 || (*inputs)[0].Control != "estop" || (*inputs)[0].Event != msg.EventPress || (*inputs)[1].Event != msg.EventRelease {
		t.Errorf("a 5 ms tap gave %+v, want estop press then release", *inputs)
	}
}

// TestConsoleEStopAndOverrideReachTheRouter runs the server's router on the
// same bus: the console's estop button engages its emergency stop, and
// holding select hands the tracks to the console until held again.
func TestConsoleEStopAndOverrideReachTheRouter(t *testing.T) {
	g := newConsoleRig(t, nil)
	rt, err := router.New(router.Options{Exec: g.Ex, Bus: g.Bus, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	defer rt.Stop()
	overrides := roletest.Collect[msg.ConsoleOverride](t, g.Bus, g.Ex, msg.TopicConsoleOverride)
	twists := roletest.Collect[msg.Twist](t, g.Bus, g.Ex, msg.TopicTracksCmdVel)

	g.press(consoleSelectPin, true, 2)
	g.Run(500 * time.Millisecond)
	if len(*overrides) != 0 {
		t.Fatalf("override after 0.5 s of a 1 s hold: %+v", *overrides)
	}
	g.Run(time.Second)
	g.press(consoleSelectPin, false, 2)
	g.Run(time.Second)
	// On at 1 s, then every 100 ms.
	if n := len(*overrides); n < 14 || n > 16 {
		t.Errorf("%d overrides in 1.5 s of override at 10 Hz", n)
	}
	on := (*overrides)[0]
	if !on.Active || on.Target != "tracks" || on.Values["linear"] != 0 || on.Values["angular"] != 0 || len(on.Values) != 2 {
		t.Errorf("override %+v, want active on tracks with linear and angular 0", on)
	}
	if !slices.ContainsFunc(rt.Status().Outputs, func(o msg.OutputState) bool {
		return o.Target == "tracks" && slices.Contains(o.RouteIDs, router.ConsoleOverrideID)
	}) {
		t.Errorf("router outputs %+v: the console override does not drive the tracks", rt.Status().Outputs)
	}
	if len(*twists) == 0 {
		t.Error("the router sent the tracks nothing while the console held them")
	}
	g.wantShown("OVERRIDE tracks")

	g.press(consoleSelectPin, true, 2)
	g.Run(1200 * time.Millisecond)
	g.press(consoleSelectPin, false, 2)
	g.Run(500 * time.Millisecond)
	last := (*overrides)[len(*overrides)-1]
	if last.Active {
		t.Errorf("last override %+v after the second hold, want inactive", last)
	}
	n := len(*overrides)
	g.Run(time.Second)
	if len(*overrides) != n {
		t.Error("overrides still sent after the override was turned off")
	}

	g.press(consoleEStopPin, true, 3)
	g.Run(500 * time.Millisecond)
	if st := rt.Status(); !st.EStopActive || st.EStopSource != router.SourceConsole {
		t.Errorf("router e-stop %v from %q, want engaged by the console", st.EStopActive, st.EStopSource)
	}
	g.Run(time.Second) // the router publishes its status
	g.wantShown("E-STOP: ACTIVE", "by console")
}

func TestConsoleStopBlanksTheScreen(t *testing.T) {
	g := newConsoleRig(t, nil)
	g.Run(300 * time.Millisecond)
	g.role.Stop()
	img := g.board.SSD1306().Image()
	if lit := countLit(img); lit != 0 {
		t.Errorf("%d pixels lit after Stop", lit)
	}
	inputs := roletest.Collect[msg.ConsoleInput](t, g.Bus, g.Ex, msg.TopicConsoleInput)
	g.press(consoleSelectPin, true, 0)
	g.Run(100 * time.Millisecond)
	if len(*inputs) != 0 {
		t.Errorf("input events after Stop: %+v", *inputs)
	}
}

func countLit(img *image.Gray) int {
	n := 0
	for _, p := range img.Pix {
		if p > 127 {
			n++
		}
	}
	return n
}

// TestConsoleShowsTheHeadsClampAlert runs the head and the console on one
// simulated robot, with the server's relay of the nodes' alerts: a head
// command past the limits puts the head's warning on the console's screen.
func TestConsoleShowsTheHeadsClampAlert(t *testing.T) {
	ex, b := executor.NewVirtual(), mem.New()
	r, err := robot.New(robot.Options{Exec: ex, TruthRate: -1})
	if err == nil {
		err = r.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	for _, part := range []struct {
		role, node string
		board      robot.Part
	}{{msg.RoleHead, "sim-head", robot.HeadPart}, {msg.RoleConsole, "sim-console", robot.ConsolePart}} {
		role, err := roles.New(part.role)
		if err != nil {
			t.Fatal(err)
		}
		if err := role.Start(rolekit.Env{NodeID: part.node, Exec: ex, Bus: b, Board: r.Board(part.board),
			Config: roletest.Config(t, part.role), Prefix: msg.TopicPrefix(part.role, "")}); err != nil {
			t.Fatal(err)
		}
		defer role.Stop()
	}
	// The head raises it on its own alert topic; the server's relay
	// shows it at the console, naming the node.
	relay := consolealerts.New(b, slog.New(slog.DiscardHandler), ex.Now)
	if _, err := bus.SubscribeJSON(b, msg.TopicAllNodeAlerts, bus.QoS{Reliability: bus.Reliable, Depth: 16}, ex, relay.Handle); err != nil {
		t.Fatal(err)
	}
	g := &consoleRig{Rig: roletest.Rig{T: t, Ex: ex, Bus: b}, board: r.Board(robot.ConsolePart)}
	g.Publish(msg.TopicHeadCmd, msg.HeadCommand{Roll: 80, Speed: 1})
	g.Run(500 * time.Millisecond)
	// "head command clamped to the configured limits: roll 80 -> 45 deg",
	// wrapped at 21 characters.
	g.wantShown("! WARNING sim-head", "head command clamped", "to the configured", "limits: roll 80 -> 45", "deg")
	g.Run(5 * time.Second)
	g.wantHidden("! WARNING sim-head")
	g.wantShown("SAINT")
}

// battery_topic names a role's power topic, the only ones the bus lets the
// console read besides its own: any other is refused at start, naming the
// field.
func TestConsoleBatteryTopicIsAPowerTopic(t *testing.T) {
	for topic, ok := range map[string]bool{
		"/saint/tracks/power":         true,
		"/saint/arms/left/power":      true,
		"/saint/limb/leg_left/power":  true,
		"/saint/head/cmd":             false,
		"/saint/router/input":         false,
		"/saint/+/power":              false,
		"/saint/power":                false,
		"/other/tracks/power":         false,
		"/saint/arms/left/x/power":    false,
		"/saint/tracks/power/details": false,
	} {
		cfg := roletest.Config(t, "console")
		cfg.Params["battery_topic"] = topic
		role, err := roles.New("console")
		if err != nil {
			t.Fatal(err)
		}
		ex := executor.NewVirtual()
		board, err := simboard.New(&simboard.Options{Profile: simboard.Console, NodeID: "c", Exec: ex})
		if err != nil {
			t.Fatal(err)
		}
		err = role.Start(rolekit.Env{NodeID: "c", Exec: ex, Bus: mem.New(), Board: board, Config: cfg, Prefix: msg.TopicPrefix(msg.RoleConsole, "")})
		if ok && err != nil {
			t.Errorf("battery_topic %s refused: %v", topic, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "battery_topic")) {
			t.Errorf("battery_topic %s: %v, want an error naming the field", topic, err)
		}
		if err == nil {
			role.Stop()
		}
	}
}

// A server or node updated before the console may add fields to the
// statuses the console shows: the screen still shows them (only the
// console's own command topics refuse what is not exactly their type).
func TestConsoleShowsStatusesWithNewerFields(t *testing.T) {
	g := newConsoleRig(t, nil)
	g.Run(500 * time.Millisecond)
	g.Publish(msg.TopicRouterStatus, map[string]any{"state": msg.RouterIdle, "estop_active": true,
		"estop_source": "safety", "a_field_from_a_newer_server": 1})
	g.Publish(msg.NodeStatusTopic("sim-head"), map[string]any{"node_id": "sim-head", "state": "ACTIVE",
		"a_field_from_newer_firmware": "x"})
	g.Publish(msg.TopicTracksPower, map[string]any{"voltage": 24.31, "present": true, "a_new_reading": 2})
	g.Run(500 * time.Millisecond)
	g.wantShown("E-STOP: ACTIVE", "by safety", "Nodes: 1", "Battery: 24.3 V")
}
