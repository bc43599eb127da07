package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"time"

	"github.com/hajimehoshi/ebiten/v2"

	"github.com/saint-os/saint/server/ws/wsclient"
	"github.com/saint-os/saint/viz/layout"
	"github.com/saint-os/saint/viz/scene"
	"github.com/saint-os/saint/viz/teleop"
)

// Topics the window subscribes to: RateTopics at most Options.RateHz
// times a second, EveryTopics at every update.
var (
	RateTopics  = []string{"sim", "odom", "tracks", "balance", "head", "router", "console"}
	EveryTopics = []string{"arms", "nodes", "joint_states"}
)

// Options configure Run; zero fields take the defaults.
type Options struct {
	Server string // ws://HOST:PORT/saint
	Token  string // API token; "" when the server needs none

	Width, Height int     // initial window size (default 1280×800)
	RateHz        float64 // updates a second per topic (default 30)
	PlotWindow    float64 // seconds the plots show (default 10)
	Arena         float64 // metres from the arena's centre to its nearer edge (default layout.DefaultHalfExtent)

	// Script holds keys as if typed, from the start.
	Script teleop.Script
	// Screenshot, when set, is where the window writes a PNG of itself
	// After the start, then closes. A JSON file beside it (the same name with
	// ".json" appended) records the tracked base's ground truth pose and the
	// humanoid's limbs drawn.
	Screenshot string
	After      time.Duration

	// Bind, when set, gives the context the window runs under, from ctx
	// and the connection's state (connected is false once the server has
	// closed it), and a function that releases it. saint-viz passes
	// internal/childproc's Bind: a window saint-sim opened closes when
	// saint-sim is gone or its API is.
	Bind func(ctx context.Context, connected func() bool) (context.Context, func(), error)

	Log *slog.Logger
}

// ShotInfo is what the screenshot's JSON file holds.
type ShotInfo struct {
	Width, Height int
	Truth         scene.Pose
	HasTruth      bool
	Odom          scene.Pose
	SimTime       float64
	// Limbs and LimbTruth are the humanoid's limbs drawn, as reported and
	// as the simulator has them (scene.Scene's), by instance.
	Limbs, LimbTruth map[string]scene.Limb `json:",omitempty"`
}

// Run connects to the server and shows the window until it is closed, ctx
// ends, or the screenshot is written. It must be called on the main
// goroutine (ebiten's rule).
func Run(ctx context.Context, o Options) error {
	if o.Width == 0 || o.Height == 0 {
		o.Width, o.Height = 1280, 800
	}
	if o.RateHz == 0 {
		o.RateHz = 30
	}
	if o.PlotWindow == 0 {
		o.PlotWindow = 10
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	c, err := wsclient.DialOptions(ctx, o.Server, o.Token, wsclient.Options{Name: "viz"})
	if err != nil {
		return err
	}
	defer c.Close()
	if o.Bind != nil {
		connected := func() bool {
			select {
			case <-c.Done():
				return false
			default:
				return true
			}
		}
		var unbind func()
		if ctx, unbind, err = o.Bind(ctx, connected); err != nil {
			return err
		}
		defer unbind()
	}
	// Several nodes and both arms share a topic, and a topic's rate limit
	// would keep only one of them: those come at every update.
	if err := c.Subscribe(RateTopics, o.RateHz); err != nil {
		return err
	}
	if err := c.Subscribe(EveryTopics, 0); err != nil {
		return err
	}
	g := &game{o: o, ctx: ctx, c: c, sc: scene.New(o.PlotWindow), tp: teleop.New(teleop.Options{})}
	ebiten.SetWindowTitle("SAINT.OS viz — " + o.Server)
	ebiten.SetWindowSize(o.Width, o.Height)
	ebiten.SetWindowResizingMode(ebiten.WindowResizingModeEnabled)
	err = ebiten.RunGame(g)
	if errors.Is(err, ebiten.Termination) {
		err = nil
	}
	if err == nil {
		err = g.shotErr
	}
	return err
}

// game implements ebiten.Game.
type game struct {
	o   Options
	ctx context.Context
	c   *wsclient.Client
	sc  *scene.Scene
	tp  *teleop.Teleop

	start    time.Time // the first update: the script's and the screenshot's zero
	last     time.Time
	elapsed  time.Duration
	w, h     int
	sent     int
	shotDone bool
	shotErr  error
	applyErr string
}

// Update implements ebiten.Game: drain the updates, run the teleop.
func (g *game) Update() error {
	if g.shotDone || g.ctx.Err() != nil {
		return ebiten.Termination
	}
	// The window is at the edge of the system, on the wall clock: a
	// script drives the real (or real-time simulated) robot for as long as
	// it says however fast the window draws.
	now := time.Now()
	if g.start.IsZero() {
		g.start, g.last = now, now
	}
	dt := now.Sub(g.last)
	g.last, g.elapsed = now, now.Sub(g.start)
	for drained := false; !drained; {
		select {
		case u, ok := <-g.c.Updates():
			if !ok {
				drained = true
				break
			}
			if err := g.sc.Apply(u.Topic, u.Timestamp, u.Data); err != nil {
				g.applyErr = err.Error()
			}
		default:
			drained = true
		}
	}
	held := g.o.Script.KeysAt(g.elapsed)
	held |= keyboard()
	for _, cmd := range g.tp.Tick(held, dt) {
		if err := g.c.Command(cmd.Target, cmd.Action, cmd.Params); err != nil {
			g.o.Log.Warn("command not sent", "target", cmd.Target, "action", cmd.Action, "err", err)
		}
		g.sent++
	}
	return nil
}

// keyboard returns the teleop keys held now.
func keyboard() teleop.Keys {
	var k teleop.Keys
	for key, keys := range map[teleop.Key][]ebiten.Key{
		teleop.Forward: {ebiten.KeyW, ebiten.KeyArrowUp}, teleop.Back: {ebiten.KeyS, ebiten.KeyArrowDown},
		teleop.Left: {ebiten.KeyA, ebiten.KeyArrowLeft}, teleop.Right: {ebiten.KeyD, ebiten.KeyArrowRight},
		teleop.HeadUp: {ebiten.KeyI}, teleop.HeadDown: {ebiten.KeyK}, teleop.HeadLeft: {ebiten.KeyJ}, teleop.HeadRight: {ebiten.KeyL},
		teleop.EStop: {ebiten.KeySpace}, teleop.Clear: {ebiten.KeyC},
	} {
		for _, e := range keys {
			if ebiten.IsKeyPressed(e) {
				k |= key
			}
		}
	}
	return k
}

// Layout implements ebiten.Game: the screen is the window, pixel for pixel.
func (g *game) Layout(w, h int) (int, int) {
	g.w, g.h = max(w, layout.MinWidth), max(h, layout.MinHeight)
	return g.w, g.h
}

// Draw implements ebiten.Game.
func (g *game) Draw(screen *ebiten.Image) {
	l := layout.Compute(g.w, g.h)
	if g.sc.HasHumanoid() {
		l = l.WithHumanoid()
	}
	screen.Fill(layout.Background)
	g.drawHeader(screen, l)
	arena := l.NewArena(g.o.Arena)
	drawArena(screen, l, arena, g.sc)
	drawStatus(screen, l.Status, g.sc)
	drawBalance(screen, l.Balance, g.sc)
	drawArms(screen, l.Arms, g.sc)
	drawHead(screen, l.Head, g.sc, g.tp)
	drawConsole(screen, l.Console, g.sc)
	if l.Humanoid.W > 0 {
		drawHumanoid(screen, l, g.sc)
	} else {
		drawHelp(screen, l.Help)
	}
	drawPlots(screen, l.Plots, g.sc)
	if g.o.Screenshot != "" && !g.shotDone && !g.start.IsZero() && g.elapsed >= g.o.After {
		g.shotErr = g.writeShot(screen)
		g.shotDone = true
	}
}

func (g *game) writeShot(screen *ebiten.Image) error {
	b := screen.Bounds()
	img := image.NewRGBA(b)
	screen.ReadPixels(img.Pix)
	f, err := os.Create(g.o.Screenshot)
	if err != nil {
		return fmt.Errorf("app: screenshot: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("app: screenshot %s: %w", g.o.Screenshot, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	info, _ := json.MarshalIndent(ShotInfo{Width: b.Dx(), Height: b.Dy(), Truth: g.sc.Truth, HasTruth: g.sc.HasTruth,
		Odom: g.sc.Odom, SimTime: g.sc.SimTime, Limbs: g.sc.Limbs, LimbTruth: g.sc.LimbTruth}, "", "  ")
	return os.WriteFile(g.o.Screenshot+".json", info, 0o644)
}
