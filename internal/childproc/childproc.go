package childproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ParentEnv names the environment variable that carries the process id of
// the SAINT command that started a child with Start.
const ParentEnv = "SAINT_PARENT_PID"

// DefaultStopGrace is how long Process.Stop and Run give a child between
// the stop signal and SIGKILL: the bridge leaves its DDS domain, the
// visualizer closes its window.
const DefaultStopGrace = 5 * time.Second

// Process is a child started by Start. Its methods are safe to call from
// any goroutine.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu     sync.Mutex // held while signalling, so no signal follows the reaping
	reaped bool
	err    error // cmd.Wait's, once reaped
}

// Start starts cmd as a child of this process that dies with it (see the
// package documentation): cmd.SysProcAttr is set for that, replacing what
// it held, and cmd.Env gains ParentEnv (cmd.Env nil: this process's
// environment). cmd must not have been started; Start waits for it
// (cmd.Wait), so the caller must not.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.Process != nil {
		return nil, errors.New("childproc: " + cmd.Path + " already started")
	}
	cmd.SysProcAttr = sysProcAttr()
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	// exec.Cmd keeps the last of duplicate variables: a child of a child
	// names its own parent.
	cmd.Env = append(env[:len(env):len(env)], ParentEnv+"="+strconv.Itoa(os.Getpid()))
	p := &Process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The thread that forks is the one whose end the kernel reports
		// to the child as its parent's death: hold it until the child is
		// reaped. Unlocked afterwards, the thread goes back to the
		// runtime's pool.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := cmd.Wait()
		p.mu.Lock()
		p.reaped, p.err = true, err
		p.mu.Unlock()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Pid is the child's process id, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the child to exit and returns cmd.Wait's error.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Signal sends sig to the child's process group; os.ErrProcessDone once
// the child has been reaped.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return os.ErrProcessDone
	}
	return signalGroup(p.cmd.Process, sig)
}

// Stop sends sig to the child's process group, SIGKILL to it after grace
// (DefaultStopGrace when not positive) if the child is still there, and
// returns the child's exit (Wait's error).
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	_ = p.Signal(sig)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.Signal(syscall.SIGKILL)
	}
	return p.Wait()
}

// RunOptions say how Run stops the child when its context ends.
type RunOptions struct {
	// Signal goes to the child's process group first; SIGTERM when zero.
	Signal syscall.Signal
	// Grace is how long the child has to exit before SIGKILL;
	// DefaultStopGrace when zero.
	Grace time.Duration
	// Started, when set, is called with the child once it runs.
	Started func(*Process)
}

// Run starts cmd with Start and waits for it to exit; when ctx ends first
// it stops the child (o.Signal, then SIGKILL after o.Grace) and waits for
// that. It returns cmd.Wait's error: a child stopped this way exits with
// an error too, which the caller tells from its own by ctx.Err.
func Run(ctx context.Context, cmd *exec.Cmd, o RunOptions) error {
	p, err := Start(cmd)
	if err != nil {
		return err
	}
	if o.Started != nil {
		o.Started(p)
	}
	select {
	case <-p.Done():
		return p.Wait()
	case <-ctx.Done():
	}
	sig := o.Signal
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	return p.Stop(sig, o.Grace)
}

// LinkGrace is how long a child started by a SAINT command may be without
// the link to its parent's bus (saint-ros2's NATS connection, saint-viz's
// WebSocket) before Bind ends its context: long enough for a broker's
// reconnect, short enough that ROS 2 tools stop seeing the robot soon
// after it is gone.
const LinkGrace = 10 * time.Second

// ExitGrace is how long after its parent is gone a bound child may take to
// shut down before Bind ends the process (exit status 1).
const ExitGrace = 5 * time.Second

// BindOptions say what Bind watches.
type BindOptions struct {
	// Link reports whether the link to the parent's bus is up; nil: only
	// the parent is watched.
	Link func() bool
	// LinkGrace replaces the package's LinkGrace when positive.
	LinkGrace time.Duration
	// Poll is how often the parent and the link are checked; 200 ms when
	// zero.
	Poll time.Duration
	// ExitGrace replaces the package's ExitGrace when positive.
	ExitGrace time.Duration
	Log       *slog.Logger
}

// ParentPID is the process id in ParentEnv: the SAINT command that started
// this process, 0 when none did.
func ParentPID() (int, error) {
	s := os.Getenv(ParentEnv)
	if s == "" {
		return 0, nil
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("childproc: $%s %q: want a process id", ParentEnv, s)
	}
	return pid, nil
}

// ErrParentGone is the cause of a bound context that ended because the
// process that started this one is gone.
var ErrParentGone = errors.New("the process that started this one is gone")

// ErrLinkLost is the cause of a bound context that ended because the link
// to the parent's bus was down for longer than the link grace.
var ErrLinkLost = errors.New("the link to the parent's bus is down")

// Bind ties this process to the SAINT command that started it, if one did
// (ParentEnv): it returns an error when that parent is already gone, and
// otherwise a context derived from ctx that ends, with ErrParentGone or
// ErrLinkLost as its cause (context.Cause, wrapped with the details), when
// the parent's process id is no longer this process's parent's or o.Link
// has reported false for longer than the link grace. Once the parent is
// gone the process exits after the exit grace even if its shutdown hangs.
// Without ParentEnv the context is ctx's child and nothing is watched.
// stop releases what Bind started.
func Bind(ctx context.Context, o BindOptions) (bound context.Context, stop func(), err error) {
	parent, err := ParentPID()
	if err != nil {
		return nil, nil, err
	}
	bound, cancel := context.WithCancelCause(ctx)
	if parent == 0 {
		return bound, func() { cancel(nil) }, nil
	}
	if err := parentGone(parent); err != nil {
		cancel(err)
		return nil, nil, err
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	w := linkWatch{grace: o.LinkGrace}
	if w.grace <= 0 {
		w.grace = LinkGrace
	}
	exitGrace := o.ExitGrace
	if exitGrace <= 0 {
		exitGrace = ExitGrace
	}
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(o.Poll)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if err := parentGone(parent); err != nil {
				o.Log.Warn("stopping: the parent process is gone", "parent_pid", parent, "err", err)
				cancel(err)
				// The parent is gone whatever the shutdown does: end
				// the process if it takes too long.
				time.AfterFunc(exitGrace, func() {
					o.Log.Error("exiting: shutdown did not finish after the parent went", "grace", exitGrace)
					os.Exit(1)
				})
				return
			}
			if o.Link != nil && w.observe(time.Now(), o.Link()) {
				err := fmt.Errorf("%w for longer than %v while started by process %d", ErrLinkLost, w.grace, parent)
				o.Log.Warn("stopping: lost the parent's bus", "parent_pid", parent, "grace", w.grace)
				cancel(err)
				return
			}
		}
	}()
	return bound, func() {
		once.Do(func() { close(quit) })
		cancel(nil)
	}, nil
}

// parentGone is ErrParentGone, with the details, when this process's
// parent is no longer pid: the parent died and the child was reparented.
func parentGone(pid int) error {
	if now := os.Getppid(); now != pid {
		return fmt.Errorf("%w: started by process %d, now the child of %d", ErrParentGone, pid, now)
	}
	return nil
}

// linkWatch tells when a link has been down for longer than grace.
type linkWatch struct {
	grace     time.Duration
	downSince time.Time // zero while the link is up
}

// observe records the link's state at now and reports whether it has
// been down for longer than grace.
func (w *linkWatch) observe(now time.Time, up bool) bool {
	if up {
		w.downSince = time.Time{}
		return false
	}
	if w.downSince.IsZero() {
		w.downSince = now
	}
	return now.Sub(w.downSince) > w.grace
}
