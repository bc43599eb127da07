package vizlaunch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/internal/childproc"
	simboard "github.com/saint-os/saint/sim/board"
)

// ConsoleBusTopic carries ConsoleFrame, the simulated console's display
// RAM; server/telemetry forwards it to WebSocket topic "console".
const ConsoleBusTopic = "/saint/sim/console"

// ConsoleFrame is the console display's RAM: 1024 bytes, eight pages of
// 128 columns, bit 0 the top row of a page (as the SSD1306 driver sends
// it). JSON carries it as base64.
type ConsoleFrame struct {
	Framebuffer []byte `json:"framebuffer"`
}

// ConsoleRate is how often ConsoleFrame is published.
const ConsoleRate = 5 // Hz

// Boards finds a simulated node's board by id or role key (the
// simulation stack).
type Boards interface {
	Board(name string) (*simboard.Board, error)
}

// Options configure Sim.
type Options struct {
	Bin       string // the saint-viz binary (internal/sibling finds it)
	Server    string // the simulation's WebSocket API, ws://HOST:PORT/saint
	TokenFile string // the API token's file when the simulation requires one
	Exec      *executor.Executor
	Bus       bus.Bus // a connection to the simulation's bus
	Boards    Boards
	Log       *slog.Logger
}

// Sim publishes the console's display RAM on ConsoleBusTopic and runs
// saint-viz on the simulation until the window closes or ctx ends, as a
// child process that dies with this one (internal/childproc); ctx's end
// closes it with SIGTERM.
func Sim(ctx context.Context, o Options) error {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Exec != nil && o.Bus != nil && o.Boards != nil {
		stop := PublishConsole(o.Exec, o.Bus, o.Boards, o.Log)
		defer stop()
	}
	args := []string{"--server", o.Server}
	if o.TokenFile != "" {
		args = append(args, "--token-file", o.TokenFile)
	}
	cmd := exec.Command(o.Bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := childproc.Run(ctx, cmd, childproc.RunOptions{Signal: syscall.SIGTERM, Started: func(p *childproc.Process) {
		o.Log.Info("opened the visualizer", "cmd", o.Bin, "server", o.Server, "pid", p.Pid())
	}})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("vizlaunch: saint-viz: %w", err)
	}
	return nil
}

// PublishConsole publishes the console board's display RAM on
// ConsoleBusTopic at ConsoleRate, on ex, until stop is called; without a
// console board it does nothing. Safe to call from any goroutine.
func PublishConsole(ex *executor.Executor, b bus.Bus, boards Boards, log *slog.Logger) (stop func()) {
	board, err := boards.Board("console")
	if err != nil || board.SSD1306() == nil {
		return func() {}
	}
	oled := board.SSD1306()
	var timer *executor.Timer
	ex.Post(func() {
		timer = ex.Every(time.Second/ConsoleRate, func() {
			if err := b.Publish(ConsoleBusTopic, ConsoleFrame{Framebuffer: oled.Framebuffer()}); err != nil && log != nil {
				log.Debug("console frame not published", "err", err)
			}
		})
	})
	return func() {
		ex.Post(func() {
			if timer != nil {
				timer.Stop()
			}
		})
	}
}
