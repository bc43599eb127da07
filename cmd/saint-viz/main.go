// Command saint-viz is the desktop visualizer: it attaches to a SAINT.OS
// server (saint-server or saint-sim) over the WebSocket API and shows the
// robot — the tracked base's ground truth and odometry in an arena, the
// balancing base, the arms, the head, the console's screen, scrolling
// plots, node status, routes and the e-stop — and drives it from the
// keyboard. See docs/viz.md.
//
//	saint-viz --server ws://127.0.0.1:9090/saint [--token T | --token-file DATA/api_token]
//
// It needs a display (X11); under CI, run it with xvfb-run.
//
// Opened by saint-sim --viz ($SAINT_PARENT_PID set), it closes when
// saint-sim is gone or its WebSocket API has been closed for longer than
// ten seconds (internal/childproc's LinkGrace).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/saint-os/saint/internal/childproc"
	"github.com/saint-os/saint/viz/app"
	"github.com/saint-os/saint/viz/teleop"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "saint-viz:", err)
		os.Exit(1)
	}
}

func run() error {
	server := flag.String("server", "ws://127.0.0.1:9090/saint", "WebSocket API URL")
	token := flag.String("token", "", "API token (default $SAINT_TOKEN)")
	tokenFile := flag.String("token-file", "", "read the API token from this file (DATA/api_token)")
	width := flag.Int("width", 1280, "initial window width, pixels")
	height := flag.Int("height", 800, "initial window height, pixels")
	rate := flag.Float64("rate", 30, "state updates a second per topic")
	window := flag.Float64("plot-window", 10, "seconds of signal the plots show")
	arena := flag.Float64("arena", 2.5, "metres from the arena's centre to its nearer edge")
	script := flag.String("script", "", `keys to hold from the start, e.g. "w:2s,-:1s,space" (see docs/viz.md)`)
	shot := flag.String("screenshot", "", "write a PNG of the window to this file after --after, then exit")
	after := flag.Duration("after", 3*time.Second, "with --screenshot: when to take it")
	flag.Parse()

	tok := *token
	if tok == "" && *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		tok = os.Getenv("SAINT_TOKEN")
	}
	sc, err := teleop.ParseScript(*script)
	if err != nil {
		return fmt.Errorf("--script: %w", err)
	}
	if *shot != "" && *after <= 0 {
		return errors.New("--after: want a positive duration with --screenshot")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Run(ctx, app.Options{
		Server: *server, Token: tok, Width: *width, Height: *height, RateHz: *rate, PlotWindow: *window,
		Arena: *arena, Script: sc, Screenshot: *shot, After: *after, Log: log,
		Bind: func(ctx context.Context, connected func() bool) (context.Context, func(), error) {
			return childproc.Bind(ctx, childproc.BindOptions{Link: connected, Log: log})
		},
	})
}
