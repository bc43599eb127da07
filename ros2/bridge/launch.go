package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/saint-os/saint/internal/childproc"
)

// LaunchOptions say which saint-ros2 Launch runs and how it restarts it.
type LaunchOptions struct {
	Bin  string   // the saint-ros2 binary
	Args []string // its flags
	Log  *slog.Logger
	// MinBackoff is the wait before the first restart, doubled after each
	// failed run up to MaxBackoff; a run that lasted StableAfter starts
	// again from MinBackoff. Zero: 1 s, 30 s and 1 min.
	MinBackoff, MaxBackoff, StableAfter time.Duration
	// Stderr receives the child's standard error (besides the line
	// scanner naming participants); nil means os.Stderr.
	Stderr io.Writer
}

// Launch runs saint-ros2 as a child process until ctx ends
// (internal/childproc: it dies with this process however this process
// ends), and supervises it: when it crashes — killed by a signal (a
// fault inside the DDS library) or ended by the Go runtime (exit status
// 2) — it is started again after a backoff, so that one fault does not
// take the robot's ROS 2 side down for good. Each crash is logged with how
// it ended and, when the child's last words named one (Cyclone's type
// guard names the participants whose types it refuses), the DDS
// participant involved. Exit status 1 is saint-ros2 stopping by its own
// decision (bad flags, saint-sim's bus gone for longer than
// childproc.LinkGrace: no bridge must advertise a robot that is not
// there): Launch returns it as an error. Launch returns nil when ctx ends.
func Launch(ctx context.Context, o LaunchOptions) error {
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.StableAfter <= 0 {
		o.StableAfter = time.Minute
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	backoff := o.MinBackoff
	for run := 1; ; run++ {
		names := &participantNames{}
		cmd := exec.Command(o.Bin, o.Args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, io.MultiWriter(o.Stderr, names)
		began := time.Now()
		// An interrupt, not a kill, so the bridge leaves the DDS domain
		// cleanly.
		err := childproc.Run(ctx, cmd, childproc.RunOptions{Signal: syscall.SIGINT, Started: func(p *childproc.Process) {
			o.Log.Info("started the ROS 2 bridge", "cmd", o.Bin, "args", o.Args, "pid", p.Pid(), "run", run)
		}})
		if ctx.Err() != nil {
			return nil
		}
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			return fmt.Errorf("bridge: saint-ros2: %w", err)
		}
		if exit != nil && exit.ExitCode() == 1 {
			return fmt.Errorf("bridge: saint-ros2 stopped: %w", err)
		}
		if time.Since(began) >= o.StableAfter {
			backoff = o.MinBackoff
		}
		attrs := []any{"exit", exitDescription(err), "ran", time.Since(began).Round(time.Millisecond), "restart_in", backoff}
		if p := names.last(); p != "" {
			attrs = append(attrs, "participant", p)
		}
		o.Log.Error("the ROS 2 bridge ended unexpectedly; restarting it", attrs...)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, o.MaxBackoff)
	}
}

// exitDescription says how a child ended: "signal: segmentation fault",
// "exit status 1".
func exitDescription(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// participantRE finds the DDS participant a log line names.
var participantRE = regexp.MustCompile(`\bparticipant=([0-9a-fA-F:,-]+)`)

// participantNames remembers the last participant the child's standard
// error named.
type participantNames struct {
	mu      sync.Mutex
	partial []byte
	name    string
}

func (w *participantNames) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if m := participantRE.FindSubmatch(w.partial[:i]); m != nil {
			w.name = string(m[1])
		}
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > 64<<10 { // a line that never ends names nobody
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

func (w *participantNames) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.name
}
